//! A table's row as the comparing rules see it: a few numbers pulled out of a result (so each rule can
//! be tested with figures made up on the spot), how its method did the work, its workload, its
//! reference, and the noise between two rows.

use super::cited::Fig;
use crate::cite::{collect, note, Cite, Source};
use crate::findings::Facts;
use iolab_engine::method::info::Exec;
use iolab_engine::result::RunResult;
use iolab_engine::spec::{Doorbell, MethodKind, OffloadPath, RingDesign};
use iolab_engine::target::TargetKind;
use iolab_engine::units::{fmt_ns, fmt_size};
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
    /// `--distribution` other than uniform ("zipf:1.2").
    pub distribution: Option<String>,
    /// `--op mixed`: the share of reads asked for, in percent.
    pub read_pct: Option<u32>,
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
    /// User + system CPU of the whole process over the run, seconds, its user and its system part.
    pub cpu_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    /// The record holds no CPU time per op (`derived.rate_withheld` or `derived.cpu_withheld`): the
    /// span was too short to time, or the process's CPU time was more than its CPUs could spend in it.
    pub cpu_withheld: bool,
    /// Flushes (fsync/msync) inside the timed span.
    pub flushes: bool,
    pub lat_mean_ns: f64,
    /// io_uring: requests per submission (iolab's count), mean requests in flight in all its rings
    /// together (what Little's law relates to the run's IOPS), times a thread found the shared ring's
    /// mutex taken.
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
    /// Offload NOPs whose SQE user_data the client left unwritten (`--no-user-data`, Figure 4.2).
    pub no_user_data: bool,
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
    /// `--memory-limit`: what the run's memory cgroup saw.
    pub memory: Option<iolab_engine::memlimit::MemoryLimit>,
    /// A file's filesystem ("tmpfs": its pages are the file, there is no device behind them).
    pub fs: Option<String>,
    /// Bytes the device gave over the timed span (the disk's own count, `device_io`), or where the record
    /// has none, the bytes the storage layer fetched for the process (/proc/self/io read_bytes).
    pub device_read_bytes: Option<u64>,
    /// Whether `device_read_bytes` is the device's own count (else the process's, /proc/self/io).
    pub device_counted: bool,
    /// Bytes the device wrote over the timed span (the disk's own count, `device_io`).
    pub device_written_bytes: Option<u64>,
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
    /// Where the row's record is kept, for the cites of the figures taken from it ([`crate::cite`]).
    pub source: Source,
    /// The record the row came from (none for a row made from a result alone).
    pub record: Option<std::sync::Arc<Value>>,
    /// Where a ranking of paired rounds placed the row ([`crate::ranking`]): the methods its order
    /// against is not decided; no finding calls one of them faster or slower. None: no ranking.
    pub not_separated: Option<Vec<String>>,
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
        let floor = info.no_data;
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
            distribution: (!r.spec.distribution.is_uniform()).then(|| r.spec.distribution.name()),
            read_pct: r.spec.read_pct,
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
            user_s: r.cpu.process.user_s,
            sys_s: r.cpu.process.sys_s,
            cpu_withheld: r.derived.rate_withheld.is_some() || r.derived.cpu_withheld.is_some(),
            flushes: r.flushes.calls > 0,
            lat_mean_ns: r.latency.mean_ns,
            mean_batch: r.uring.as_ref().map(|u| u.mean_batch),
            mean_inflight: r
                .uring
                .as_ref()
                .map(|u| u.inflight_all_rings(r.spec.threads)),
            lock_contended: r
                .uring
                .as_ref()
                .filter(|_| r.spec.ring.design == RingDesign::Shared)
                .map(|u| u.lock_contended),
            doorbells_per_op: r.offload.as_ref().and_then(|o| per_op(o.doorbells)),
            wakeups_per_op: r.offload.as_ref().and_then(|o| per_op(o.server_wakeups)),
            service_cpu_share: r.offload.as_ref().and_then(|o| o.service_cpu_share),
            would_block: r.nowait.as_ref().map(|n| n.would_block_share),
            offload: (info.exec == Exec::OutOfProcess)
                .then_some((r.spec.offload.path, r.spec.offload.doorbell)),
            client_cycles: r.offload.as_ref().and_then(|o| o.client_cycles.clone()),
            sleeps_per_op: r
                .offload
                .as_ref()
                .and_then(|o| o.server_sleeps.and_then(per_op)),
            sq_sleep: r.offload.as_ref().is_some_and(|o| o.sq_sleep),
            no_user_data: r.offload.as_ref().is_some_and(|o| o.no_user_data),
            tsc_ghz: (r.clock.kind == iolab_engine::measure::clock::ClockKind::Tsc)
                .then_some(r.clock.hz / 1e9),
            reference: false,
            spread: None,
            cold_cache: r.spec.cold_cache,
            memory: r.memory.clone(),
            fs: r.target.fs.clone(),
            device_read_bytes: r
                .device_io
                .as_ref()
                .map(|d| d.read_bytes)
                .or_else(|| r.syscalls.kernel_rw.as_ref().map(|k| k.read_bytes)),
            device_counted: r.device_io.is_some(),
            device_written_bytes: r.device_io.as_ref().map(|d| d.written_bytes),
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
            source: Source::Nowhere,
            record: None,
            not_separated: None,
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
        let target = key("target")
            .map(|t| crate::series::shown(&t))
            .unwrap_or_else(|| match (r.target.kind, r.spec.target.file_name()) {
                (TargetKind::File, Some(n)) => n.to_string_lossy().to_string(),
                _ => r.spec.target.display().to_string(),
            });
        let mut row = Row::of(&key("step").unwrap_or_default(), &target, &r);
        row.record = Some(std::sync::Arc::new(rec.clone()));
        Some(row)
    }

    /// Wall-clock ns per op (cited: [`crate::cite`]).
    pub fn ns(&self) -> f64 {
        self.cited(Fig::NsPerOp)
    }

    pub fn method(&self) -> Option<MethodKind> {
        self.facts.method
    }

    /// The row's way ("io_uring (qd 64 batch 32)"), its spec's depth and batch cited where it names them.
    pub fn way(&self) -> &str {
        if crate::cite::collecting() {
            for (f, word) in [(Fig::Qd, "qd"), (Fig::Batch, "batch")] {
                if self.way.contains(&format!("{word} {}", figure(f, self))) {
                    self.cited(f);
                }
            }
        }
        &self.way
    }

    /// "4 B writes to /dev/null" (with O_DIRECT, random, threads when they apply; the spec's figures it
    /// names cited).
    pub fn workload(&self) -> String {
        self.cited(Fig::Bs);
        if self.threads > 1 {
            self.cited(Fig::Threads);
        }
        if self.nop_requests {
            self.cited(Fig::Batch);
        }
        let mut w = format!(
            "{} {}{} {} {}",
            fmt_size(self.facts.bs),
            match (self.pattern.as_str(), &self.distribution) {
                ("rand", None) => "random ".to_string(),
                ("rand", Some(d)) => format!("random ({d}) "),
                _ => String::new(),
            },
            match self.read_pct {
                Some(p) => format!("mixed ({p}% reads)"),
                None if self.facts.write && self.logged() => "logged writes".into(),
                None if self.facts.write => "writes".into(),
                None => "reads".into(),
            },
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

    /// The row and another do the same workload: [`Row::same_but_log`], and the sink driver's log switch
    /// alike (a logged write does more than an unlogged one: a row of each differs in two things).
    pub fn same_workload(&self, o: &Row) -> bool {
        self.same_but_log(o) && self.logged() == o.logged()
    }

    /// A run on the sink driver with its log switch on (`--sink-log`: a log line and a tracepoint per
    /// write, the Pi thesis's LM_LOG).
    pub fn logged(&self) -> bool {
        self.facts.sink.as_ref().is_some_and(|s| s.log)
    }

    /// The row and another do the same workload but perhaps for the sink driver's log switch: what sets
    /// a logged row beside its unlogged twin, to tell the log's cost.
    pub fn same_but_log(&self, o: &Row) -> bool {
        let f = (&self.facts, &o.facts);
        self.place == o.place
            && f.0.write == f.1.write
            && f.0.bs == f.1.bs
            && f.0.direct == f.1.direct
            && self.pattern == o.pattern
            && self.distribution == o.distribution
            && self.read_pct == o.read_pct
            && self.threads == o.threads
            && self.nop_requests == o.nop_requests
            && (!self.nop_requests || self.batch == o.batch)
    }

    /// Ops per second (cited).
    pub fn iops(&self) -> f64 {
        self.cited(Fig::Iops)
    }

    /// CPU nanoseconds per op (the whole process's user + system time; its three figures cited).
    pub fn cpu_ns_per_op(&self) -> Option<f64> {
        let v = self.cited_opt(Fig::CpuNsPerOp)?;
        self.cited(Fig::UserS);
        self.cited(Fig::SysS);
        self.cited(Fig::Ops);
        Some(v)
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

/// [`way`] of a spec: as the method's file names its way.
pub(super) fn way_of(s: &iolab_engine::spec::Spec) -> String {
    let info = s.method.info();
    (info.way)(info, s)
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
        let plain = |j: &&usize| rows[**j].method().is_some_and(|m| m.info().plain);
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
            "ranges that overlap: this difference is not measured by these runs",
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

impl Row {
    /// Whether a ranking left the order of this row and `b` undecided (a tie or too few rounds).
    pub fn not_separated_from(&self, b: &Row) -> bool {
        let named = |r: &Row, o: &Row| {
            r.not_separated
                .as_ref()
                .is_some_and(|t| o.method().is_some_and(|m| t.iter().any(|x| x == m.name())))
        };
        named(self, b) || named(b, self)
    }

    /// The row's figure `f`, noted as a cite of its record's field (where the row came from a line of a
    /// record file and has the figure).
    pub fn cited(&self, f: Fig) -> f64 {
        let v = figure(f, self);
        if !crate::cite::collecting() {
            return v;
        }
        // Only a field the record has (an older record lacks the newer ones).
        let held = || {
            self.record.as_ref().is_some_and(|rec| {
                f.field()
                    .split('.')
                    .try_fold(&**rec, |x, k| x.get(k))
                    .is_some_and(|x| x.is_number())
            })
        };
        if v.is_finite() && held() {
            if let Some(c) = self.source.cite(v, f.field().to_string()) {
                note(c);
            }
        }
        v
    }

    /// [`Row::cited`] of a figure the row may lack (`None` then).
    pub fn cited_opt(&self, f: Fig) -> Option<f64> {
        Some(self.cited(f)).filter(|v| !v.is_nan())
    }

    /// The cites of figures `figs` of the row, taken now.
    pub fn cites_of(&self, figs: &[Fig]) -> Vec<Cite> {
        collect(|| {
            for f in figs {
                self.cited(*f);
            }
        })
        .1
    }

    /// The cites of the figures at `paths` of the row's result (`a|b`: the first the record has as a
    /// number; a path may start with `result.`, as [`Fig::field`]s do), taken from its record; none for
    /// a row from no file.
    pub fn cites_at(&self, paths: &[&str]) -> Vec<Cite> {
        let Some(rec) = &self.record else {
            return Vec::new();
        };
        paths
            .iter()
            .filter_map(|alts| {
                alts.split('|').find_map(|p| {
                    let p = p.strip_prefix("result.").unwrap_or(p);
                    let v = p
                        .split('.')
                        .try_fold(&rec["result"], |v, k| match v {
                            Value::Array(a) => a.get(k.parse::<usize>().ok()?),
                            _ => v.get(k),
                        })?
                        .as_f64()?;
                    self.source.cite(v, format!("result.{p}"))
                })
            })
            .collect()
    }

    /// Notes the cite of the kernel's count of system call `name` (its pair in
    /// `kernel.syscalls_by_name`).
    pub fn cite_kernel_call(&self, name: &str) {
        if let Some(i) = self.kernel_calls.iter().position(|(n, _)| n == name) {
            self.cite_paths(&[&format!("kernel.syscalls_by_name.{i}.1")]);
        }
    }

    /// Notes the cite of the kernel's count of tracepoint `name` (`kernel.tracepoints`).
    pub fn cite_tracepoint(&self, name: &str) {
        let Some(rec) = &self.record else { return };
        let points = rec["result"]["kernel"]["tracepoints"].as_array();
        if let Some(i) = points.and_then(|t| t.iter().position(|c| c["name"] == name)) {
            self.cite_paths(&[&format!("kernel.tracepoints.{i}.value")]);
        }
    }

    /// Notes the cites of the figures at `paths` of the row's result ([`Row::cites_at`]) as taken, for
    /// figures no [`Fig`] names.
    pub fn cite_paths(&self, paths: &[&str]) {
        for c in self.cites_at(paths) {
            note(c);
        }
    }
}

/// The row's value of figure `f` (NaN where the row has none).
fn figure(f: Fig, r: &Row) -> f64 {
    let opt = |v: Option<f64>| v.unwrap_or(f64::NAN);
    match f {
        Fig::NsPerOp => r.facts.ns_per_op,
        // As the record's figure is made: ops over the timed span.
        Fig::Iops if r.facts.wall_s > 0.0 => r.ops as f64 / r.facts.wall_s,
        Fig::Iops => 0.0,
        Fig::MibS => r.mib_s,
        Fig::LatMeanNs => r.lat_mean_ns,
        Fig::UserS => r.user_s,
        Fig::SysS => r.sys_s,
        Fig::Ops => r.ops as f64,
        Fig::Bytes => r.bytes as f64,
        Fig::WallS => r.facts.wall_s,
        Fig::MeanBatch => opt(r.mean_batch),
        Fig::SyscallsPerOp => opt(r.facts.syscalls_per_op),
        Fig::Punted => opt(r.facts.punted_fraction),
        Fig::WouldBlock => opt(r.would_block),
        Fig::ServiceCpuShare => opt(r.service_cpu_share),
        Fig::SqpollCpuS => r.facts.sqpoll_cpu_s,
        Fig::SqpollCpuShare => opt(r.facts.sqpoll_cpu_share),
        Fig::IowqCpuS => r.facts.iowq_cpu_s,
        Fig::WorkerCpuS => r.facts.worker_cpu_s,
        // As the record's figure is made (`findings::derive`).
        Fig::CpuNsPerOp => {
            opt((r.ops > 0 && r.cpu_s > 0.0 && !r.cpu_withheld)
                .then(|| r.cpu_s * 1e9 / r.ops as f64))
        }
        Fig::CtxSwitchesPerOp => opt(r.facts.ctx_switches_per_op),
        Fig::PageFaultsPerMib => opt(r.facts.page_faults_per_mib),
        Fig::RwCallsPerOp => r.facts.rw_syscalls_per_op,
        Fig::Bs => r.facts.bs as f64,
        Fig::Qd => r.facts.qd as f64,
        Fig::Batch => r.batch as f64,
        Fig::Threads => r.threads as f64,
        Fig::Inflight => opt(r.mean_inflight),
        Fig::CallsPerOp => opt(r.calls_per_op),
        Fig::CyclesPerOp => opt(r.tsc_ghz.map(|g| r.facts.ns_per_op * g)),
        Fig::DeviceReadBytes => opt(r
            .device_read_bytes
            .filter(|_| r.device_counted)
            .map(|b| b as f64)),
        Fig::ProcReadBytes => opt(r
            .device_read_bytes
            .filter(|_| !r.device_counted)
            .map(|b| b as f64)),
        Fig::DeviceWrittenBytes => opt(r.device_written_bytes.map(|b| b as f64)),
        Fig::FlushS => r.flush_s,
        // A share of a few ticks is mostly rounding (1 of 1 is 100%): not compared.
        Fig::BusiestCore => opt(r
            .busiest_core
            .filter(|(_, ticks)| *ticks as f64 >= iolab_engine::measure::cpu::FEW_TICKS)
            .map(|(s, _)| s)),
    }
}

#[cfg(test)]
mod cite_tests {
    use super::*;

    #[test]
    fn collects_each_figure_once_and_only_inside() {
        let mut r = test_row("write()", MethodKind::Sync, 250.0);
        r.source = Source::Line(7);
        r.record = Some(std::sync::Arc::new(
            serde_json::json!({"point": {}, "result": {"ns_per_op": 250.0}}),
        ));
        r.cited(Fig::NsPerOp);
        let ((), cites) = collect(|| {
            r.cited(Fig::NsPerOp);
            r.cited(Fig::NsPerOp);
            r.cited(Fig::MeanBatch);
        });
        assert_eq!(
            cites,
            vec![Cite {
                value: 250.0,
                line: Some(7),
                run: None,
                field: "result.ns_per_op".into()
            }],
            "once, and no mean batch where the row has none"
        );
        let ((), none) = collect(|| {
            r.source = Source::Nowhere;
            r.cited(Fig::NsPerOp);
        });
        assert!(none.is_empty(), "a row from no file cites nothing");
        r.source = Source::Line(7);
        r.record = Some(std::sync::Arc::new(
            serde_json::json!({"point": {}, "result": {}}),
        ));
        let ((), older) = collect(|| {
            r.cited(Fig::NsPerOp);
        });
        assert!(older.is_empty(), "no cite of a field the record lacks");
        r.source = Source::Run(3);
        r.record = Some(std::sync::Arc::new(serde_json::json!({"result": {
            "derived": {"kernel_requests_per_enter": null, "iolab_requests_per_enter": 1.5}
        }})));
        assert_eq!(
            r.cites_at(&["derived.kernel_requests_per_enter|derived.iolab_requests_per_enter"]),
            vec![Cite {
                value: 1.5,
                line: None,
                run: Some(3),
                field: "result.derived.iolab_requests_per_enter".into()
            }],
            "the first alternative the record has as a number"
        );
    }
}
