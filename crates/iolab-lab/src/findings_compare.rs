//! Findings that compare: sentences about the rows of one table (a suite's points, or one target of the
//! survey) set side by side, each carrying the figures that triggered it ("io_uring took 3.4x write()'s
//! time per op on the same target: 100% of its requests were punted to io-wq ...").
//!
//! As in `findings.rs`, every rule lives in a table, works on [`Row`]s (a few numbers pulled out of a
//! result, so each rule can be tested with figures made up on the spot), and has one test that triggers
//! it and one that does not:
//! - [`PAIR_RULES`] look at a row and another row of the same workload (same target, direction, block
//!   size, O_DIRECT or not, pattern and threads): another method against the workload's reference row
//!   (write()/read() where the table has one, else the fastest), batched against one request per
//!   submission, a shared ring against per-thread rings;
//! - [`SET_RULES`] look at the rows of a workload family at once: where buffered and O_DIRECT cross over
//!   the block sizes (`findings_crossover`);
//! - [`plausibility`] looks at one throughput (a row's, or a seed's published one) against what this
//!   machine's memory can copy (`measure::memcopy`): beyond it, the figure is impossible.

use crate::findings::{self, Facts};
pub(crate) use crate::findings_crossover::crossover;
use iolab_engine::measure::memcopy::{gbps, MemCopy};
use iolab_engine::result::RunResult;
use iolab_engine::sink_device::Personality;
use iolab_engine::spec::{Doorbell, MethodKind, OffloadPath, OpKind, RingDesign};
use iolab_engine::target::TargetKind;
use iolab_engine::units::{fmt_ns, fmt_size};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One row of a table, as the comparing rules see it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// The suite step (or survey target) the row is in.
    pub step: String,
    /// The target as the table names it ("/dev/null", "{disk}/writes.dat", "file").
    pub target: String,
    /// The target's path (tells apart two targets the table names alike); rows of one workload share it.
    pub place: String,
    /// The way of doing I/O in words: "write()", "io_uring (SQPOLL, producer-consumer, qd 64 batch 1)".
    pub way: String,
    pub pattern: String,
    pub threads: u32,
    pub batch: u32,
    /// The ring design ("per-thread", "shared" ...), io_uring only.
    pub design: Option<RingDesign>,
    /// io_uring with IORING_SETUP_IOPOLL.
    pub iopoll: bool,
    /// System calls per op by iolab's own count of the method's calls.
    pub calls_per_op: Option<f64>,
    /// The nop method: the harness's floor, never a reference and never compared.
    pub floor: bool,
    /// Requests that move no data (io_uring NOPs): compared only at the same batch.
    pub nop_requests: bool,
    /// The bytes pass through memory copies (the plausibility rule applies).
    pub copies: bool,
    /// Bytes the data spans (a file region), when known.
    pub working_set: Option<u64>,
    /// CPUs online on the host that ran it (how many could copy at once).
    pub cpus: u32,
    pub ops: u64,
    pub bytes: u64,
    pub mib_s: f64,
    /// User + system CPU of the whole process over the run, seconds, and its system part.
    pub cpu_s: f64,
    pub sys_s: f64,
    /// Flushes (fsync/msync) inside the timed span.
    pub flushes: bool,
    pub lat_mean_ns: f64,
    /// io_uring: requests per submission (iolab's count), mean requests in flight, times a thread found
    /// the shared ring's mutex taken.
    pub mean_batch: Option<f64>,
    pub mean_inflight: Option<f64>,
    pub lock_contended: Option<u64>,
    /// Offload: doorbells rung and server wake-ups per request, the server threads' CPU share.
    pub doorbells_per_op: Option<f64>,
    pub wakeups_per_op: Option<f64>,
    pub service_cpu_share: Option<f64>,
    /// Offload: the path and (broker) the doorbell.
    pub offload: Option<(OffloadPath, Doorbell)>,
    /// Offload: the client's own cycles, the times its server slept per request, and whether the SQ
    /// thread was let sleep before every round trip (`--sq-sleep`).
    pub client_cycles: Option<iolab_engine::offload::cycles::ClientCycles>,
    pub sleeps_per_op: Option<f64>,
    pub sq_sleep: bool,
    /// TSC cycles per ns of the clock that timed it (None: not the TSC).
    pub tsc_ghz: Option<f64>,
    /// pwritev2/preadv2 RWF_NOWAIT: the share of ops that would have blocked.
    pub would_block: Option<f64>,
    /// The workload's reference row (set by [`mark_references`]).
    pub reference: bool,
    /// Repeated runs of the row's point (`iolab suite --repeat N`): the row is the run with the median
    /// ns/op, and this is how many ran and the lowest and highest ns/op of the middle runs.
    pub spread: Option<Spread>,
    /// `--cold-cache`: the target's pages were dropped before the pass.
    pub cold_cache: bool,
    /// A file's filesystem ("tmpfs": its pages are the file, there is no device behind them).
    pub fs: Option<String>,
    /// Bytes the storage layer fetched for the process over the run (/proc/self/io read_bytes).
    pub device_read_bytes: u64,
    /// Seconds in --fsync/--msync flushes inside the timed span.
    pub flush_s: f64,
    /// The busiest CPU's kernel share system-wide (/proc/stat) and the ticks it counted.
    pub busiest_core: Option<(f64, u64)>,
    /// The kernel's counts of the counting pass: all system calls (raw_syscalls:sys_enter), per name,
    /// the ops that pass ran and the io_uring_enter calls iolab made in it.
    pub kernel_syscalls: Option<u64>,
    pub kernel_calls: Vec<(String, u64)>,
    pub counted_ops: Option<u64>,
    pub counted_enters: Option<u64>,
    pub facts: Facts,
}

/// How repeated runs of one point spread: runs, and the lowest and highest ns/op of the middle runs
/// (`stats::middle_range`: all of them up to 3 runs, without the fastest and slowest quarter above).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub runs: usize,
    pub low_ns: f64,
    pub high_ns: f64,
}

impl Row {
    /// The row of an iolab run's result, in `step`, its target named `target`.
    pub fn of(step: &str, target: &str, r: &RunResult) -> Row {
        let info = r.spec.method.info();
        let nop_requests = r.spec.ring.nop_requests;
        let floor = r.spec.method == MethodKind::Nop;
        let copies = !(floor
            || nop_requests
            || info.kernel_copy
            || info.no_data
            || matches!(r.target.kind, TargetKind::DevNull | TargetKind::DevZero));
        let working_set = matches!(r.target.kind, TargetKind::File | TargetKind::BlockDevice)
            .then(|| r.target.region_blocks_per_thread * r.spec.bs * r.spec.threads as u64)
            .filter(|w| *w > 0);
        let per_op = |x: u64| (r.ops > 0).then(|| x as f64 / r.ops as f64);
        // The sink driver's personalities take data differently: each is a target of its own.
        let (target, place) = match r.sink.as_ref().and_then(|s| s.personality) {
            Some(p) => (
                format!("{target} ({})", p.name()),
                format!("{} ({})", r.spec.target.display(), p.name()),
            ),
            None => (target.to_string(), r.spec.target.display().to_string()),
        };
        Row {
            step: step.to_string(),
            target,
            place,
            way: way(r),
            pattern: r.spec.pattern.name().to_string(),
            threads: r.spec.threads,
            batch: r.spec.batch,
            design: r.uring.as_ref().map(|_| r.spec.ring.design),
            iopoll: r.spec.ring.iopoll,
            calls_per_op: r.syscalls.method_per_op,
            floor,
            nop_requests,
            copies,
            working_set,
            cpus: r.host.cpus_online as u32,
            ops: r.ops,
            bytes: r.bytes,
            mib_s: r.mib_s,
            cpu_s: r.cpu.process.user_s + r.cpu.process.sys_s,
            sys_s: r.cpu.process.sys_s,
            flushes: r.flushes.calls > 0,
            lat_mean_ns: r.latency.mean_ns,
            mean_batch: r.uring.as_ref().map(|u| u.mean_batch),
            mean_inflight: r.uring.as_ref().map(|u| u.mean_inflight),
            lock_contended: r
                .uring
                .as_ref()
                .filter(|_| r.spec.ring.design == RingDesign::Shared)
                .map(|u| u.lock_contended),
            doorbells_per_op: r.offload.as_ref().and_then(|o| per_op(o.doorbells)),
            wakeups_per_op: r.offload.as_ref().and_then(|o| per_op(o.server_wakeups)),
            service_cpu_share: r.offload.as_ref().map(|o| o.service_cpu_share),
            would_block: r.nowait.as_ref().map(|n| n.would_block_share),
            offload: (r.spec.method == MethodKind::Offload)
                .then_some((r.spec.offload.path, r.spec.offload.doorbell)),
            client_cycles: r.offload.as_ref().and_then(|o| o.client_cycles.clone()),
            sleeps_per_op: r
                .offload
                .as_ref()
                .and_then(|o| o.server_sleeps.and_then(per_op)),
            sq_sleep: r.offload.as_ref().is_some_and(|o| o.sq_sleep),
            tsc_ghz: (r.clock.kind == iolab_engine::measure::clock::ClockKind::Tsc)
                .then_some(r.clock.hz / 1e9),
            reference: false,
            spread: None,
            cold_cache: r.spec.cold_cache,
            fs: r.target.fs.clone(),
            device_read_bytes: r.syscalls.kernel_rw.read_bytes,
            flush_s: r.flushes.total_s,
            busiest_core: r
                .cpu
                .system_wide
                .as_ref()
                .map(|s| (s.busiest_kernel_share, s.ticks)),
            kernel_syscalls: r
                .kernel
                .tracepoints
                .iter()
                .find(|c| c.name == "raw_syscalls:sys_enter")
                .and_then(|c| c.value),
            kernel_calls: r.kernel.syscalls_by_name.clone(),
            counted_ops: r.kernel.tracepoint_pass_ops,
            counted_enters: r.kernel.tracepoint_pass_uring_enters,
            facts: Facts::of(r),
        }
    }

    /// The row of a suite's or sweep's record, named by its step and its point's target; `None` for a
    /// record without an iolab run's result (a point not run, decimal lines, the clock's cost).
    pub fn of_record(rec: &Value) -> Option<Row> {
        let result = rec.get("result")?;
        result.get("workload").is_none().then_some(())?;
        let r: RunResult = serde_json::from_value(result.clone()).ok()?;
        let point = crate::series::record_point(rec);
        let key = |k: &str| point.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone());
        // A file the point does not name: its name alone (the directory is the suite's temporary one).
        let target =
            key("target").unwrap_or_else(|| match (r.target.kind, r.spec.target.file_name()) {
                (TargetKind::File, Some(n)) => n.to_string_lossy().to_string(),
                _ => r.spec.target.display().to_string(),
            });
        Some(Row::of(&key("step").unwrap_or_default(), &target, &r))
    }

    pub fn ns(&self) -> f64 {
        self.facts.ns_per_op
    }

    pub fn method(&self) -> Option<MethodKind> {
        self.facts.method
    }

    /// "4 B writes to /dev/null" (with O_DIRECT, random, threads when they apply).
    pub fn workload(&self) -> String {
        let mut w = format!(
            "{} {}{} {} {}",
            fmt_size(self.facts.bs),
            if self.pattern == "rand" {
                "random "
            } else {
                ""
            },
            if self.facts.write { "writes" } else { "reads" },
            if self.facts.write { "to" } else { "from" },
            self.target
        );
        if self.facts.direct {
            w.push_str(" (O_DIRECT)");
        }
        if self.threads > 1 {
            w.push_str(&format!(", {} threads", self.threads));
        }
        if self.nop_requests {
            w = format!(
                "NOP requests, batch {}{}",
                self.batch,
                if self.threads > 1 {
                    format!(", {} threads", self.threads)
                } else {
                    String::new()
                }
            );
        }
        w
    }

    /// The row and another do the same workload.
    pub fn same_workload(&self, o: &Row) -> bool {
        let f = (&self.facts, &o.facts);
        self.place == o.place
            && f.0.write == f.1.write
            && f.0.bs == f.1.bs
            && f.0.direct == f.1.direct
            && self.pattern == o.pattern
            && self.threads == o.threads
            && self.nop_requests == o.nop_requests
            && (!self.nop_requests || self.batch == o.batch)
    }

    /// Ops per second.
    pub fn iops(&self) -> f64 {
        if self.facts.wall_s > 0.0 {
            self.ops as f64 / self.facts.wall_s
        } else {
            0.0
        }
    }

    /// CPU nanoseconds per op (the whole process's user + system time).
    pub fn cpu_ns_per_op(&self) -> Option<f64> {
        (self.ops > 0 && self.cpu_s > 0.0).then(|| self.cpu_s * 1e9 / self.ops as f64)
    }
}

/// "write()", "pread()", "io_uring (SQPOLL, producer-consumer, qd 64 batch 1)", "offload (broker path,
/// eventfd doorbell, batch 1)".
pub fn way(r: &RunResult) -> String {
    let w = way_of(&r.spec);
    let inline = r
        .kernel
        .tracepoint_pass
        .as_deref()
        .is_some_and(|p| p.contains("inline"));
    if inline {
        format!("{w} with tracepoints on")
    } else {
        w
    }
}

/// [`way`] of a spec.
fn way_of(s: &iolab_engine::spec::Spec) -> String {
    let w = s.op == OpKind::Write;
    match s.method {
        MethodKind::Sync => (if w { "write()" } else { "read()" }).into(),
        MethodKind::Psync => (if w { "pwrite()" } else { "pread()" }).into(),
        MethodKind::IoUring => {
            let mut o = Vec::new();
            if s.ring.sqpoll {
                o.push("SQPOLL".to_string());
            }
            if s.ring.iopoll {
                o.push("IOPOLL".to_string());
            }
            if s.ring.design != RingDesign::PerThread {
                o.push(format!("{} ring", s.ring.design.name()));
            }
            o.push(format!("qd {} batch {}", s.qd, s.batch));
            format!("io_uring ({})", o.join(", "))
        }
        MethodKind::Offload => {
            let mut o = vec![format!("{} path", s.offload.path.name())];
            if s.offload.partition == iolab_engine::spec::Partition::Vm {
                o.insert(0, "from a guest partition".to_string());
            }
            if s.offload.path == OffloadPath::Broker {
                o.push(format!("{} doorbell", s.offload.doorbell.name()));
            }
            if s.offload.sq_sleep {
                o.push("SQ thread asleep before every round trip".into());
            }
            o.push(format!("batch {}", s.batch));
            format!("offload ({})", o.join(", "))
        }
        m => match (m.info().describe)(s) {
            Some(d) => format!("{} ({d})", m.name()),
            None => m.name().to_string(),
        },
    }
}

/// Marks one reference row per workload: write()/read() (or pwrite()/pread()) where the workload has
/// one, else its fastest row; never the nop floor.
pub fn mark_references(rows: &mut [Row]) {
    for r in rows.iter_mut() {
        r.reference = false;
    }
    for i in 0..rows.len() {
        if rows[i].floor || rows[..i].iter().any(|p| p.same_workload(&rows[i])) {
            continue;
        }
        let group: Vec<usize> = (0..rows.len())
            .filter(|&j| !rows[j].floor && rows[j].same_workload(&rows[i]))
            .collect();
        let plain = |j: &&usize| {
            matches!(
                rows[**j].method(),
                Some(MethodKind::Sync | MethodKind::Psync)
            )
        };
        let pick = group.iter().find(plain).copied().or_else(|| {
            group
                .iter()
                .copied()
                .min_by(|a, b| rows[*a].ns().total_cmp(&rows[*b].ns()))
        });
        if let Some(j) = pick {
            rows[j].reference = true;
        }
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Why `a` took longer per op than `b`, as far as the counters say.
pub(crate) fn why_slower(a: &Row, b: &Row) -> Vec<String> {
    let (fa, fb) = (&a.facts, &b.facts);
    let mut w = Vec::new();
    if let Some(p) = fa.punted_fraction.filter(|p| *p >= 0.5) {
        w.push(format!(
            "{} of its requests were punted to io-wq worker threads",
            pct(p)
        ));
    }
    if let Some(c) = fa.ctx_switches_per_op {
        let cb = fb.ctx_switches_per_op.unwrap_or(0.0);
        if c >= 0.2 && c > 2.0 * cb {
            w.push(format!("{c:.2} context switches per op (against {cb:.2})"));
        }
    }
    if fa.sqpoll_cpu_s >= 0.01 && fa.wall_s > 0.0 {
        w.push(format!(
            "its SQPOLL thread kept {} of a CPU busy",
            pct(fa.sqpoll_cpu_s / fa.wall_s)
        ));
    }
    if fa.iowq_cpu_s >= 0.01 && fa.iowq_cpu_s > fa.worker_cpu_s {
        w.push(format!(
            "io-wq workers used {:.3} s of CPU, more than its own threads ({:.3} s)",
            fa.iowq_cpu_s, fa.worker_cpu_s
        ));
    }
    if let (Some(sa), Some(sb)) = (fa.syscalls_per_op, fb.syscalls_per_op) {
        if sa >= 0.2 && sa >= 1.5 * sb {
            w.push(format!("{sa:.2} system calls per op (against {sb:.2})"));
        } else if sa <= 0.5 * sb {
            w.push(format!(
                "though it made fewer system calls ({sa:.2} against {sb:.2} per op): the time went elsewhere than \
                 crossing into the kernel"
            ));
        }
    }
    if let Some(x) = fa.aio_inline_fraction.filter(|x| *x >= 0.95) {
        w.push(format!(
            "native AIO completed {} of its requests inside io_submit: the same synchronous work plus the \
             submission and completion bookkeeping",
            pct(x)
        ));
    }
    if let Some(n) = a.lock_contended.filter(|n| *n > 0) {
        w.push(format!(
            "its threads found the ring's mutex taken {n} times ({:.2} per op)",
            n as f64 / a.ops.max(1) as f64
        ));
    }
    if let (Some(d), Some(k)) = (a.doorbells_per_op, a.wakeups_per_op) {
        if d >= 0.05 || k >= 0.05 {
            w.push(format!(
                "{d:.2} doorbells and {k:.2} server wake-ups per request (each a sleep and a wake-up across CPUs)"
            ));
        }
    }
    if let Some(p) = fa.page_faults_per_mib.filter(|p| *p >= 128.0) {
        w.push(format!("{p:.0} page faults per MiB"));
    }
    if let (Some(ca), Some(cb)) = (a.cpu_ns_per_op(), b.cpu_ns_per_op()) {
        if ca >= 1.5 * cb {
            w.push(format!(
                "{} of CPU per op, all threads counted (against {})",
                fmt_ns(ca),
                fmt_ns(cb)
            ));
        }
    }
    if fa.wall_s > 0.0 && fa.steal_s / fa.wall_s >= 0.1 {
        w.push(format!(
            "the hypervisor stole {} of its run",
            pct(fa.steal_s / fa.wall_s)
        ));
    }
    w
}

/// Why `a` took less time per op than `b`.
pub(crate) fn why_faster(a: &Row, b: &Row) -> Vec<String> {
    let (fa, fb) = (&a.facts, &b.facts);
    let mut w = Vec::new();
    if let (Some(sa), Some(sb)) = (fa.syscalls_per_op, fb.syscalls_per_op) {
        if sa <= 0.5 * sb {
            w.push(format!("{sa:.3} system calls per op against {sb:.3}"));
        }
    } else if fa.rw_syscalls_per_op > 0.0 && fa.rw_syscalls_per_op <= 0.5 * fb.rw_syscalls_per_op {
        w.push(format!(
            "{:.4} read/write calls per op against {:.2} (the kernel's count)",
            fa.rw_syscalls_per_op, fb.rw_syscalls_per_op
        ));
    }
    if fa.info_maps() {
        w.push(format!(
            "it copies into a mapping and pays page faults instead of calls ({:.0} per MiB)",
            fa.page_faults_per_mib.unwrap_or(0.0)
        ));
    }
    if let Some(m) = a.mean_batch.filter(|m| *m >= 4.0) {
        w.push(format!("{m:.1} requests per submission"));
    }
    if let (Some(ca), Some(cb)) = (a.cpu_ns_per_op(), b.cpu_ns_per_op()) {
        if ca <= cb / 1.5 {
            w.push(format!(
                "{} of CPU per op, all threads counted (against {})",
                fmt_ns(ca),
                fmt_ns(cb)
            ));
        }
    }
    w
}

impl Facts {
    fn info_maps(&self) -> bool {
        self.method.is_some_and(|m| m.info().maps)
    }
}

fn because(w: Vec<String>, fallback: &str) -> String {
    if w.is_empty() {
        fallback.to_string()
    } else {
        w.join("; ")
    }
}

/// A comparison that took at least this ratio of times is worth a sentence.
pub const RATIO: f64 = 1.5;

type PairRule = (&'static str, fn(&Row, &Row) -> Option<String>);

/// Rules over a row `a` and another row `b` of the same table, in the order findings are printed.
pub const PAIR_RULES: &[PairRule] = &[
    ("slower_than_reference", |a, b| {
        let r = a.ns() / b.ns();
        (b.reference && !a.floor && a.method() != b.method() && a.same_workload(b) && r >= RATIO).then(|| {
            format!(
                "{} took {r:.1}x {}'s time per op ({} vs {} per op): {}",
                a.way,
                b.way,
                fmt_ns(a.ns()),
                fmt_ns(b.ns()),
                because(
                    why_slower(a, b),
                    "no counter of this run explains it (run it alone with --count separate for the kernel's counts, \
                     or --profile for where the time went)"
                )
            )
        })
    }),
    ("faster_than_reference", |a, b| {
        let r = a.ns() / b.ns();
        (b.reference
            && !a.floor
            && a.method() != b.method()
            && a.same_workload(b)
            && r <= 1.0 / RATIO)
            .then(|| {
                format!(
                    "{} took {r:.2}x {}'s time per op ({} vs {} per op): {}",
                    a.way,
                    b.way,
                    fmt_ns(a.ns()),
                    fmt_ns(b.ns()),
                    because(why_faster(a, b), "no counter of this run explains it")
                )
            })
    }),
    ("batched_vs_single", |a, b| {
        let (ma, mb) = (a.mean_batch?, b.mean_batch?);
        let r = a.ns() / b.ns();
        let both =
            a.method() == Some(MethodKind::IoUring) && b.method() == Some(MethodKind::IoUring);
        // At another queue depth the difference is the depth's, not the batch's.
        let same_depth = a.facts.qd == b.facts.qd;
        (both && same_depth && a.same_workload(b) && ma >= 4.0 * mb && mb <= 1.5 && !(1.0 / 1.2..1.2).contains(&r)).then(|| {
            let verdict = if r < 1.0 {
                format!("batching paid: {:.2} syscalls per op against {:.2}", a.facts.syscalls_per_op.unwrap_or(f64::NAN), b.facts.syscalls_per_op.unwrap_or(f64::NAN))
            } else {
                "batching did not pay here: the time goes elsewhere than the submission calls".to_string()
            };
            format!(
                "{} ({ma:.1} requests per submission) took {r:.2}x the time of {} ({mb:.1} per submission): {verdict}",
                a.way, b.way
            )
        })
    }),
    ("shared_vs_own_ring", |a, b| {
        let shared = matches!(
            a.design,
            Some(RingDesign::Shared | RingDesign::SharedSubmitter)
        );
        let r = a.ns() / b.ns();
        (shared
            && b.design == Some(RingDesign::PerThread)
            && a.same_workload(b)
            && a.facts.qd == b.facts.qd
            && a.batch == b.batch
            && !(1.0 / 1.2..1.2).contains(&r))
        .then(|| {
            let mut w = Vec::new();
            match a.lock_contended {
                Some(0) => w.push("no thread ever found its mutex taken".to_string()),
                Some(n) => w.push(format!(
                    "threads found its mutex taken {n} times ({:.2} per op)",
                    n as f64 / a.ops.max(1) as f64
                )),
                None => {}
            }
            if let (Some(x), Some(y)) = (a.mean_batch, b.mean_batch) {
                w.push(format!("{x:.1} requests per submission against {y:.1}"));
            }
            if let (Some(x), Some(y)) = (a.mean_inflight, b.mean_inflight) {
                w.push(format!(
                    "{x:.1} requests in flight on average against {y:.1}"
                ));
            }
            format!(
                "{} took {r:.2}x the time of per-thread rings ({} vs {} per op): {}",
                a.way,
                fmt_ns(a.ns()),
                fmt_ns(b.ns()),
                because(w, "no batch or lock figure recorded")
            )
        })
    }),
    ("sink_personalities", |a, b| {
        let (pa, pb) = (sink_of(a)?, sink_of(b)?);
        let r = a.ns() / b.ns();
        let same = a.way == b.way
            && base_place(a) == base_place(b)
            && (a.facts.write, a.facts.bs, a.threads) == (b.facts.write, b.facts.bs, b.threads);
        let (wa, wb) = (pa.1.unwrap_or(0.0), pb.1.unwrap_or(0.0));
        (same
            && pa.0 == Personality::Legacy
            && pb.0 == Personality::Nowait
            && (wa - wb >= 0.5 || !(1.0 / 1.2..1.2).contains(&r)))
        .then(|| {
            format!(
                "{} on the legacy sink took {r:.2}x its time on the nowait sink ({:.0} vs {:.0} ns/op): {} of the \
                 legacy driver's calls came from io-wq workers against {} (no write_iter/FMODE_NOWAIT: io_uring \
                 cannot complete its requests inline)",
                a.way,
                a.ns(),
                b.ns(),
                pct(wa),
                pct(wb)
            )
        })
    }),
];

/// The sink driver's personality of a row, and the share of its calls io-wq workers made.
fn sink_of(r: &Row) -> Option<(Personality, Option<f64>)> {
    let s = r.facts.sink.as_ref()?;
    Some((s.personality?, s.worker_share))
}

/// A row's target without the sink's personality ("/dev/iolab_sink (legacy)" -> "/dev/iolab_sink").
fn base_place(r: &Row) -> &str {
    r.place.split(" (").next().unwrap_or(&r.place)
}

/// A rule over every row of a table at once: its name, what its findings are about, and the rule.
type SetRule = (&'static str, &'static str, fn(&[&Row]) -> Vec<String>);

/// Rules over every row of a table at once.
pub const SET_RULES: &[SetRule] = &[(
    "direct_crossover",
    "buffered against O_DIRECT, over the block sizes",
    |rows| {
        let mut out = Vec::new();
        let mut seen: Vec<(String, bool, Option<MethodKind>, u32)> = Vec::new();
        for r in rows {
            let key = (r.place.clone(), r.facts.write, r.method(), r.threads);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key.clone());
            let family: Vec<&&Row> = rows
                .iter()
                .filter(|x| (x.place.clone(), x.facts.write, x.method(), x.threads) == key)
                .collect();
            if let Some(s) = crossover(&family) {
                out.push(if r.step.is_empty() {
                    s
                } else {
                    format!("{}: {s}", r.step)
                });
            }
        }
        out
    },
)];

/// A throughput beyond what this machine can move through memory: the sentence saying so, or `None`
/// when the figure is possible. `cpus` is how many CPUs could have worked at once; `working_set` the
/// bytes the data spans, when known (unknown: the L1 copy rate is the ceiling, the most generous).
pub fn plausibility(
    bytes: f64,
    seconds: f64,
    working_set: Option<u64>,
    cpus: u32,
    mem: &MemCopy,
) -> Option<String> {
    if seconds <= 0.0 || bytes <= 0.0 {
        return None;
    }
    let rate = bytes / seconds;
    let c = mem.ceiling(working_set, cpus);
    (rate > PLAUSIBLE_MARGIN * c.bps).then(|| {
        format!(
            "impossible: {} is {:.1}x {} ({}): the bytes cannot all have been moved in that time",
            gbps(rate),
            rate / c.bps,
            c.what,
            gbps(c.bps)
        )
    })
}

/// A throughput must pass the ceiling by this factor to be called impossible (measuring noise, and a
/// copy that beats the measured pass by a little, are not impossibility).
pub const PLAUSIBLE_MARGIN: f64 = 1.5;

/// Whether the repeated runs of `a` and `b` overlap in ns/op (false when either ran once: not measured).
pub fn within_noise(a: &Row, b: &Row) -> bool {
    match (a.spread, b.spread) {
        (Some(x), Some(y)) => x.low_ns <= y.high_ns && y.low_ns <= x.high_ns,
        _ => false,
    }
}

/// What the repeated runs say of a difference between `a` and `b` (empty when either ran once): within
/// the noise when the middle runs' ns/op ranges overlap, beyond it when they do not.
pub fn noise(a: &Row, b: &Row) -> String {
    let (Some(x), Some(y)) = (a.spread, b.spread) else {
        return String::new();
    };
    let range = |s: Spread| iolab_engine::units::fmt_range(s.low_ns, s.high_ns, fmt_ns);
    let (verdict, ranges) = if within_noise(a, b) {
        (
            "within",
            "ranges that overlap: this difference is not measured here",
        )
    } else {
        ("beyond", "ranges apart")
    };
    format!(
        " ({verdict} the noise: over {} and {} runs the middle runs took {} and {} per op, {ranges})",
        x.runs,
        y.runs,
        range(x),
        range(y)
    )
}

/// A comparative finding: its rule, the table part it is about, and the sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compared {
    pub rule: String,
    /// The workload ("4 B writes to /dev/null") or, for a row's own finding, the row ("write(), 4 B
    /// writes to /dev/null").
    pub about: String,
    pub text: String,
}

/// Every comparative finding over `rows` (references marked first), then the plausibility rule on each
/// row and each row's own findings (`findings.rs`, recomputed from its facts).
pub fn compare(rows: &mut [Row], mem: &MemCopy) -> Vec<Compared> {
    mark_references(rows);
    let mut out = Vec::new();
    for (name, rule) in PAIR_RULES {
        for a in rows.iter() {
            for b in rows.iter() {
                if std::ptr::eq(a, b) {
                    continue;
                }
                if let Some(text) = rule(a, b) {
                    out.push(Compared {
                        rule: (*name).into(),
                        about: a.workload(),
                        text: text + &noise(a, b),
                    });
                }
            }
        }
    }
    let refs: Vec<&Row> = rows.iter().collect();
    for (name, about, rule) in SET_RULES {
        for text in rule(&refs) {
            out.push(Compared {
                rule: (*name).into(),
                about: (*about).into(),
                text,
            });
        }
    }
    // One heading per workload: the comparisons about one workload together, in first-seen order.
    let first: Vec<String> = out.iter().map(|c| c.about.clone()).collect();
    out.sort_by_key(|c| first.iter().position(|a| *a == c.about));
    for r in rows.iter() {
        let about = format!("{}, {}", r.way, r.workload());
        if r.copies {
            if let Some(text) = plausibility(
                r.bytes as f64,
                r.facts.wall_s,
                r.working_set,
                r.cpus.max(1),
                mem,
            ) {
                out.push(Compared {
                    rule: "beyond_memory_copy".into(),
                    about: about.clone(),
                    text,
                });
            }
        }
        for f in findings::findings_of(&r.facts) {
            out.push(Compared {
                rule: f.rule,
                about: about.clone(),
                text: f.text,
            });
        }
    }
    out
}

/// A row of `way` on /dev/null, 4 B writes, `ns` per op (for the tests here and in `answers`).
#[cfg(test)]
pub(crate) fn test_row(way: &str, method: MethodKind, ns: f64) -> Row {
    Row {
        step: "s".into(),
        target: "/dev/null".into(),
        place: "/dev/null".into(),
        way: way.into(),
        pattern: "seq".into(),
        threads: 1,
        batch: 1,
        ops: 1000,
        bytes: 4000,
        cpu_s: ns * 1e-6,
        facts: Facts {
            method: Some(method),
            target: Some(TargetKind::DevNull),
            write: true,
            bs: 4,
            qd: 1,
            ns_per_op: ns,
            wall_s: ns * 1e-6,
            syscalls_per_op: Some(1.0),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::test_row as row;
    use super::*;
    use iolab_engine::measure::memcopy::sample;

    fn fired(rows: &mut [Row]) -> Vec<Compared> {
        compare(rows, &sample())
    }

    fn has(out: &[Compared], rule: &str) -> bool {
        out.iter().any(|c| c.rule == rule)
    }

    fn text<'a>(out: &'a [Compared], rule: &str) -> &'a str {
        &out.iter().find(|c| c.rule == rule).unwrap().text
    }

    fn uring(ns: f64) -> Row {
        let mut u = row("io_uring (SQPOLL, qd 64 batch 1)", MethodKind::IoUring, ns);
        u.facts.punted_fraction = Some(1.0);
        u.facts.ctx_switches_per_op = Some(2.0);
        u.facts.syscalls_per_op = Some(0.05);
        u.mean_batch = Some(1.0);
        u.design = Some(RingDesign::PerThread);
        u
    }

    #[test]
    fn the_reference_is_write_else_the_fastest_never_the_floor() {
        let mut rows = vec![
            uring(300.0),
            row("write()", MethodKind::Sync, 600.0),
            row("nop", MethodKind::Nop, 5.0),
        ];
        rows[2].floor = true;
        mark_references(&mut rows);
        assert_eq!(
            rows.iter().map(|r| r.reference).collect::<Vec<_>>(),
            [false, true, false]
        );
        let mut rows = vec![uring(900.0), uring(300.0)];
        mark_references(&mut rows);
        assert!(rows[1].reference && !rows[0].reference);
    }

    #[test]
    fn slower_than_reference() {
        let mut rows = vec![row("write()", MethodKind::Sync, 600.0), uring(2040.0)];
        let out = fired(&mut rows);
        let t = text(&out, "slower_than_reference");
        assert!(
            t.starts_with("io_uring (SQPOLL, qd 64 batch 1) took 3.4x write()'s time per op (2.0 µs vs 600.0 ns per op): 100% of its requests were punted to io-wq worker threads; 2.00 context switches per op"),
            "{t}"
        );
        // Within the ratio: nothing said.
        let mut rows = vec![row("write()", MethodKind::Sync, 600.0), uring(700.0)];
        assert!(!has(&fired(&mut rows), "slower_than_reference"));
        // Another target is another workload.
        let mut other = uring(2040.0);
        other.place = "/tmp/f".into();
        let mut rows = vec![row("write()", MethodKind::Sync, 600.0), other];
        assert!(!has(&fired(&mut rows), "slower_than_reference"));
    }

    #[test]
    fn faster_than_reference() {
        let mut mm = row("mmap", MethodKind::Mmap, 100.0);
        mm.facts.syscalls_per_op = Some(0.0);
        mm.facts.page_faults_per_mib = Some(256.0);
        let mut rows = vec![row("write()", MethodKind::Sync, 600.0), mm.clone()];
        let out = fired(&mut rows);
        let t = text(&out, "faster_than_reference");
        assert!(
            t.starts_with("mmap took 0.17x write()'s time per op (100.0 ns vs 600.0 ns per op): 0.000 system calls per op against 1.000; it copies into a mapping and pays page faults instead of calls (256 per MiB)"),
            "{t}"
        );
        mm.facts.ns_per_op = 550.0;
        let mut rows = vec![row("write()", MethodKind::Sync, 600.0), mm];
        assert!(!has(&fired(&mut rows), "faster_than_reference"));
    }

    #[test]
    fn batched_vs_single() {
        let mut b = uring(200.0);
        b.way = "io_uring (qd 64 batch 32)".into();
        b.mean_batch = Some(32.0);
        b.facts.syscalls_per_op = Some(0.03);
        let mut rows = vec![uring(2000.0), b.clone()];
        let t = text(&fired(&mut rows), "batched_vs_single").to_string();
        assert!(
            t.starts_with("io_uring (qd 64 batch 32) (32.0 requests per submission) took 0.10x the time of io_uring (SQPOLL, qd 64 batch 1) (1.0 per submission): batching paid"),
            "{t}"
        );
        // At another queue depth the difference is the depth's: no batching verdict.
        let mut deeper = b.clone();
        deeper.facts.qd *= 128;
        let mut rows = vec![uring(2000.0), deeper];
        assert!(!has(&fired(&mut rows), "batched_vs_single"));
        b.mean_batch = Some(2.0);
        let mut rows = vec![uring(2000.0), b];
        assert!(!has(&fired(&mut rows), "batched_vs_single"));
    }

    #[test]
    fn sink_personalities() {
        let on_sink = |p: Personality, ns: f64, share: f64| {
            let mut r = uring(ns);
            r.way = "io_uring (qd 64 batch 32)".into();
            r.place = format!("/dev/iolab_sink ({})", p.name());
            r.facts.sink = Some(findings::SinkFacts {
                personality: Some(p),
                worker_share: Some(share),
                disagree: vec![],
            });
            r
        };
        let mut rows = vec![
            on_sink(Personality::Legacy, 40000.0, 1.0),
            on_sink(Personality::Nowait, 7000.0, 0.0),
        ];
        let t = text(&fired(&mut rows), "sink_personalities").to_string();
        assert!(
            t.starts_with("io_uring (qd 64 batch 32) on the legacy sink took 5.71x its time on the nowait sink (40000 vs 7000 ns/op): 100% of the legacy driver's calls came from io-wq workers against 0%"),
            "{t}"
        );
        // Two runs that behave alike (write() on both) say nothing.
        let mut rows = vec![
            on_sink(Personality::Legacy, 2000.0, 0.0),
            on_sink(Personality::Nowait, 2100.0, 0.0),
        ];
        assert!(!has(&fired(&mut rows), "sink_personalities"));
    }

    #[test]
    fn shared_vs_own_ring() {
        let mut own = uring(1000.0);
        own.mean_batch = Some(2.0);
        own.mean_inflight = Some(60.0);
        let mut shared = own.clone();
        shared.way = "io_uring (shared ring, qd 64 batch 8)".into();
        shared.design = Some(RingDesign::Shared);
        shared.facts.ns_per_op = 2200.0;
        shared.lock_contended = Some(500);
        shared.mean_batch = Some(1.0);
        let mut rows = vec![own.clone(), shared.clone()];
        let t = text(&fired(&mut rows), "shared_vs_own_ring").to_string();
        assert!(
            t.starts_with("io_uring (shared ring, qd 64 batch 8) took 2.20x the time of per-thread rings (2.2 µs vs 1.0 µs per op): threads found its mutex taken 500 times (0.50 per op); 1.0 requests per submission against 2.0"),
            "{t}"
        );
        // Another queue depth or batch is another workload for this rule.
        let mut other = shared.clone();
        other.facts.qd = own.facts.qd * 64;
        let mut rows = vec![own.clone(), other];
        assert!(!has(&fired(&mut rows), "shared_vs_own_ring"));
        let mut other = shared.clone();
        other.batch = 64;
        let mut rows = vec![own.clone(), other];
        assert!(!has(&fired(&mut rows), "shared_vs_own_ring"));
        shared.facts.ns_per_op = 1050.0;
        let mut rows = vec![own, shared];
        assert!(!has(&fired(&mut rows), "shared_vs_own_ring"));
    }

    #[test]
    fn repeated_rows_say_whether_a_difference_is_within_the_noise() {
        let spread = |low_ns: f64, high_ns: f64| {
            Some(Spread {
                runs: 5,
                low_ns,
                high_ns,
            })
        };
        let mut own = uring(1000.0);
        own.mean_batch = Some(2.0);
        let mut shared = own.clone();
        shared.way = "io_uring (shared ring, qd 64 batch 8)".into();
        shared.design = Some(RingDesign::Shared);
        shared.facts.ns_per_op = 1300.0;
        // One run each: nothing said about noise.
        let mut rows = vec![own.clone(), shared.clone()];
        let t = text(&fired(&mut rows), "shared_vs_own_ring").to_string();
        assert!(!t.contains("noise"), "{t}");
        // Middle runs that overlap: within the noise.
        own.spread = spread(900.0, 1250.0);
        shared.spread = spread(1200.0, 1400.0);
        let mut rows = vec![own.clone(), shared.clone()];
        let t = text(&fired(&mut rows), "shared_vs_own_ring").to_string();
        assert!(
            t.ends_with("(within the noise: over 5 and 5 runs the middle runs took 1.2-1.4 µs and 900.0 ns-1.2 µs per op, ranges that overlap: this difference is not measured here)"),
            "{t}"
        );
        // Apart: beyond it.
        own.spread = spread(950.0, 1050.0);
        let mut rows = vec![own, shared];
        let t = text(&fired(&mut rows), "shared_vs_own_ring").to_string();
        assert!(t.contains("(beyond the noise: over 5 and 5 runs"), "{t}");
        assert!(t.ends_with("ranges apart)"), "{t}");
    }

    fn bs_row(bs: u64, direct: bool, mib_s: f64) -> Row {
        let mut r = row("pwrite()", MethodKind::Psync, 1000.0);
        r.target = "{disk}/b.dat".into();
        r.place = "/var/tmp/x/b.dat".into();
        r.facts.bs = bs;
        r.facts.direct = direct;
        r.mib_s = mib_s;
        r
    }

    #[test]
    fn direct_crossover() {
        let mut rows = vec![
            bs_row(512, false, 40.0),
            bs_row(512, true, 3.0),
            bs_row(65536, false, 900.0),
            bs_row(65536, true, 300.0),
            bs_row(1 << 20, false, 1000.0),
            bs_row(1 << 20, true, 1500.0),
        ];
        let out = fired(&mut rows);
        let t = text(&out, "direct_crossover");
        assert_eq!(
            t,
            "s: writes to {disk}/b.dat pwrite(): buffered and O_DIRECT cross between 64 KiB and 1 MiB (64 KiB: buffered 900.0 MiB/s, O_DIRECT 300.0; 1 MiB: buffered 1000.0 MiB/s, O_DIRECT 1500.0)"
        );
        // Buffered only: nothing to cross.
        let mut rows = vec![bs_row(512, false, 40.0), bs_row(65536, false, 900.0)];
        assert!(!has(&fired(&mut rows), "direct_crossover"));
        // Back and forth is told run by run.
        let mut rows = vec![
            bs_row(512, false, 300.0),
            bs_row(512, true, 400.0),
            bs_row(65536, false, 900.0),
            bs_row(65536, true, 300.0),
        ];
        assert!(
            text(&fired(&mut rows), "direct_crossover")
                .starts_with("s: writes to {disk}/b.dat pwrite(): O_DIRECT faster at 512 B, then buffered faster at 64 KiB (512 B: buffered 300.0"),
            "{:?}",
            fired(&mut rows)
        );
        // Never crossing is said so.
        let mut rows = vec![bs_row(512, false, 40.0), bs_row(512, true, 3.0)];
        assert!(text(&fired(&mut rows), "direct_crossover").contains("O_DIRECT never caught up"));
    }

    #[test]
    fn beyond_memory_copy() {
        let m = sample();
        // The Pi thesis's "dma 4kb": 1M writes of 4 KiB in 0.010 s, one CPU, data span unknown.
        let t = plausibility(4096e6, 0.010, None, 1, &m).unwrap();
        assert!(
            t.starts_with("impossible: 409.6 GB/s is 8.2x what one CPU can copy even within the L1 cache (50.0 GB/s)"),
            "{t}"
        );
        // Its "dma 4b" (4 MB in 9 ms) is possible.
        assert_eq!(plausibility(4e6, 0.009, None, 1, &m), None);
        // Beyond the caches the memory rate is the ceiling: 40 GB/s over a 1 GiB span is impossible,
        // within a small span it is not.
        assert!(plausibility(40e9, 1.0, Some(1 << 30), 1, &m).is_some());
        assert!(plausibility(40e9, 1.0, Some(1 << 20), 1, &m).is_none());
        // A row that copies is checked; a row on /dev/null (no copy) is not.
        let mut fast = bs_row(4096, false, 1.0);
        fast.copies = true;
        fast.bytes = 400_000_000_000;
        fast.facts.wall_s = 1.0;
        let mut rows = vec![fast.clone()];
        assert!(has(&fired(&mut rows), "beyond_memory_copy"));
        fast.copies = false;
        let mut rows = vec![fast];
        assert!(!has(&fired(&mut rows), "beyond_memory_copy"));
    }

    #[test]
    fn rows_own_findings_come_along_with_the_fix_for_sqpoll() {
        let mut u = uring(2000.0);
        u.facts.sqpoll = true;
        u.facts.syscalls_per_op = Some(0.0);
        u.facts.kernel_requests_per_enter = Some(1e6);
        u.facts.uring_requests = Some(1_000_000);
        u.facts.uring_enters = Some(1);
        u.facts.submissions_without_syscall = Some(999_999);
        let out = fired(&mut [u]);
        assert!(
            has(&out, "sqpoll_submitted") && !has(&out, "batching_worked"),
            "{out:?}"
        );
    }

    #[test]
    fn every_rule_is_tested() {
        let src = include_str!("findings_compare.rs");
        let names = PAIR_RULES
            .iter()
            .map(|(n, _)| *n)
            .chain(SET_RULES.iter().map(|(n, ..)| *n))
            .chain(["beyond_memory_copy"]);
        for name in names {
            assert!(
                src.matches(&format!("fn {name}()")).count() == 1,
                "rule {name} has no test named after it"
            );
        }
    }
}
