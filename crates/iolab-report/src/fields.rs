//! Every place in a result record the HTML report reads, in one table. The report reads records as JSON
//! values (files written by earlier iolab versions, sweeps and suites, `run --json` documents), so each
//! place is a path of object keys; a [`Field`] can only be made here, and the tests below serialize the
//! structs that write the records (`RunResult`, `LinesResult`, `series::record`) and check that every
//! field resolves in each document said to hold it: renaming a field of `RunResult` fails them.

#[cfg(feature = "html")]
use iolab_lab::series;
#[cfg(feature = "html")]
use serde_json::Value;

/// A path of object keys into a record or its result, from this module's table only.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field(&'static [&'static str]);

impl Field {
    /// The value at this field, when present.
    #[cfg(feature = "html")]
    pub(crate) fn at(self, v: &Value) -> Option<&Value> {
        series::at(v, self.0)
    }

    /// The number at this field.
    #[cfg(feature = "html")]
    pub(crate) fn num(self, v: &Value) -> Option<f64> {
        series::num(v, self.0)
    }

    /// The value at this field as table text (strings bare, absent or null empty).
    #[cfg(feature = "html")]
    pub(crate) fn text(self, v: &Value) -> String {
        series::text(self.at(v))
    }

    /// The field's path of keys.
    pub(crate) fn path(self) -> &'static [&'static str] {
        self.0
    }

    /// The field's last key (a spec key's name).
    #[cfg(feature = "html")]
    pub(crate) fn key(self) -> &'static str {
        self.0[self.0.len() - 1]
    }
}

/// The documents a field is read from, for the tests.
#[cfg(test)]
#[derive(Debug, Clone, Copy)]
enum Holder {
    /// A sweep's or suite's record of a point that ran (`series::record` with a result).
    Record,
    /// A record of a point that did not run (`series::record` with an error).
    ErrorRecord,
    /// `iolab_engine::result::RunResult`: an iolab run's result.
    Run,
    /// `iolab_lab::lines::LinesResult`: a decimal-lines run's result (suite step `workload = "lines"`).
    Lines,
    /// One of a run's `findings` (`iolab_engine::result::Finding`).
    Finding,
    /// One of a profile's `groups`, `top_self` or `top_inclusive` (`iolab_engine::result::ProfileShare`).
    Share,
    /// One of a run's `intervals` (`iolab_engine::result::IntervalFigures`).
    Interval,
    /// One of a memory-limited run's readings every 100 ms (`iolab_engine::memwatch::MemPoint`).
    MemPoint,
    /// One of a survey's `runs` (`iolab_lab::survey::SurveyRun`), which the report reads as a record's
    /// result when a survey's JSON is given to it; that it ran.
    SurveyRun,
    /// One of a survey's runs that could not run.
    SurveyUnavailable,
    /// One of a survey's run's `round_runs` (`iolab_lab::rounds::RoundRun`).
    RoundRun,
}

macro_rules! fields {
    ($($(#[$doc:meta])* $name:ident = [$($key:literal),+] in $($holder:ident),+;)*) => {
        $($(#[$doc])* pub(crate) const $name: Field = Field(&[$($key),+]);)*

        /// Every field above with the names of the documents that hold it.
        const HELD: &[(Field, &[&str])] = &[$(($name, &[$(stringify!($holder)),+])),*];

        /// Every field above, with its name and the documents that hold it.
        #[cfg(test)]
        const ALL: &[(&str, Field, &[Holder])] = &[$((stringify!($name), $name, &[$(Holder::$holder),+])),*];
    };
}

fields! {
    /// A record's result (absent when the point did not run).
    RESULT = ["result"] in Record;
    /// Why a record's point did not run.
    ERROR = ["error"] in ErrorRecord;
    /// Present in the results of workloads other than iolab runs ("decimal-lines"; the suites' clock
    /// records, written as JSON in `suite.rs`, say "clock").
    WORKLOAD = ["workload"] in Lines;
    SPEC_METHOD = ["spec", "method"] in Run, Lines;
    SPEC_OP = ["spec", "op"] in Run;
    SPEC_PATTERN = ["spec", "pattern"] in Run;
    SPEC_BS = ["spec", "bs"] in Run;
    SPEC_THREADS = ["spec", "threads"] in Run;
    SPEC_QD = ["spec", "qd"] in Run;
    SPEC_BATCH = ["spec", "batch"] in Run;
    SPEC_DIRECT = ["spec", "direct"] in Run;
    /// A method's own options given (aio's `reap-at-most`): in a run's label.
    SPEC_METHOD_OPTS = ["spec", "method_opts"] in Run;
    SPEC_TARGET = ["spec", "target"] in Run, Lines;
    SPEC_LINES = ["spec", "lines"] in Lines;
    MIB_S = ["mib_s"] in Run;
    IOPS = ["iops"] in Run;
    OPS = ["ops"] in Run;
    NS_PER_OP = ["ns_per_op"] in Run;
    WALL_S = ["wall_s"] in Run, Lines;
    LATENCY = ["latency"] in Run;
    LATENCY_P50 = ["latency", "p50_ns"] in Run;
    LATENCY_P90 = ["latency", "p90_ns"] in Run;
    LATENCY_P99 = ["latency", "p99_ns"] in Run;
    LATENCY_P999 = ["latency", "p999_ns"] in Run;
    /// Ops the latency distribution holds.
    LATENCY_COUNT = ["latency", "count"] in Run;
    /// `[[quantile, ns], ...]`.
    LATENCY_CDF = ["latency", "cdf"] in Run;
    /// `[[upper bound ns, count], ...]`.
    GAP_BUCKETS = ["gap", "buckets"] in Run;
    CPU_USER_S = ["cpu", "process", "user_s"] in Run, Lines;
    CPU_SYS_S = ["cpu", "process", "sys_s"] in Run, Lines;
    SYSCALLS_PER_OP = ["syscalls", "method_per_op"] in Run;
    /// Null or absent in runs of methods other than io_uring.
    URING = ["uring"] in Run;
    /// `[[requests per submission, count], ...]`.
    URING_BATCHES = ["uring", "batch_histogram"] in Run;
    HOST = ["host"] in Run;
    HOST_KERNEL_RELEASE = ["host", "kernel_release"] in Run;
    HOST_CPU_MODEL = ["host", "cpu_model"] in Run;
    HOST_CPUS_ONLINE = ["host", "cpus_online"] in Run;
    /// True when the run's CPU was emulated (QEMU TCG: `iolab vm`); absent in records before it existed.
    HOST_EMULATED = ["host", "emulated"] in Run;
    /// "tcg" or "kvm" under `iolab vm`, null elsewhere.
    HOST_ACCELERATOR = ["host", "accelerator"] in Run;
    FINDINGS = ["findings"] in Run;
    /// Inside one of `FINDINGS`.
    FINDING_TEXT = ["text"] in Finding;
    /// A sampled profile (`--profile`); null or absent in runs that were not profiled.
    PROFILE = ["profile"] in Run;
    /// "separate" or "inline": which pass was sampled.
    PROFILE_PASS = ["profile", "pass"] in Run;
    /// The perf event sampled ("cpu-clock", "cycles").
    PROFILE_EVENT = ["profile", "event"] in Run;
    PROFILE_HZ = ["profile", "frequency_hz"] in Run;
    PROFILE_SAMPLES = ["profile", "samples"] in Run;
    PROFILE_LOST = ["profile", "lost"] in Run;
    /// Why frames have no names, where they have none.
    PROFILE_UNSYMBOLIZED = ["profile", "unsymbolized"] in Run;
    /// Shares (see `SHARE_*`) of what the code does ("copy to/from user", ...), largest first.
    PROFILE_GROUPS = ["profile", "groups"] in Run;
    /// Shares of functions as the leaf frame, and anywhere on the stack.
    PROFILE_TOP_SELF = ["profile", "top_self"] in Run;
    PROFILE_TOP_INCLUSIVE = ["profile", "top_inclusive"] in Run;
    /// `["thread;outermost;...;leaf count", ...]`: the flame graph's input.
    PROFILE_FOLDED = ["profile", "folded"] in Run;
    PROFILE_NOTES = ["profile", "notes"] in Run;
    /// Offload runs (`--method offload`); null or absent in others.
    OFFLOAD_PATH = ["offload", "path"] in Run;
    OFFLOAD_BATCH = ["offload", "batch"] in Run;
    OFFLOAD_DOORBELLS = ["offload", "doorbells"] in Run;
    /// Times the server thread slept over the run; null where it was not counted.
    OFFLOAD_SERVER_SLEEPS = ["offload", "server_sleeps"] in Run;
    /// The client's own cycles (null without a cycle counter, absent before it existed).
    OFFLOAD_CYCLES = ["offload", "client_cycles"] in Run;
    OFFLOAD_REQ_COUNT = ["offload", "client_cycles", "requests", "count"] in Run;
    OFFLOAD_REQ_P50 = ["offload", "client_cycles", "requests", "p50_cycles"] in Run;
    OFFLOAD_REQ_P99 = ["offload", "client_cycles", "requests", "p99_cycles"] in Run;
    OFFLOAD_TRIP_P50 = ["offload", "client_cycles", "round_trips", "p50_cycles"] in Run;
    OFFLOAD_TRIP_P99 = ["offload", "client_cycles", "round_trips", "p99_cycles"] in Run;
    OFFLOAD_TRIP_MEAN = ["offload", "client_cycles", "round_trips", "mean_cycles"] in Run;
    /// A round trip's mean cycles over its requests, and the same in ns (null when not the TSC).
    OFFLOAD_PER_REQ = ["offload", "client_cycles", "per_request_cycles"] in Run;
    OFFLOAD_PER_REQ_NS = ["offload", "client_cycles", "per_request_ns"] in Run;
    /// Inside one of `PROFILE_GROUPS`, `PROFILE_TOP_SELF`, `PROFILE_TOP_INCLUSIVE`.
    SHARE_NAME = ["name"] in Share;
    /// Kernel code (else user space).
    SHARE_KERNEL = ["kernel"] in Share;
    /// samples / all samples (0..1).
    SHARE_SHARE = ["share"] in Share;
    /// The timed pass over time (`--log-interval`): `[{start_s, end_s, ops, iops, lat_p99_ns ...}, ...]`;
    /// absent in runs without intervals.
    INTERVALS = ["intervals"] in Run;
    /// Inside one of `INTERVALS`: seconds from the run's first op to the interval's end.
    INTERVAL_END_S = ["end_s"] in Interval;
    INTERVAL_IOPS = ["iops"] in Interval;
    INTERVAL_P99 = ["lat_p99_ns"] in Interval;
    /// `--memory-limit`: the cgroup read every 100 ms of the timed pass: `[{t_s, page_cache, ...}, ...]`.
    MEMORY_OVER_TIME = ["memory", "over_time"] in Run;
    /// Inside one of `MEMORY_OVER_TIME`: seconds since the timed span started, and the page cache (bytes).
    MEM_T_S = ["t_s"] in MemPoint;
    MEM_PAGE_CACHE = ["page_cache"] in MemPoint;
    /// "/dev/null", "file" or "pipe".
    SURVEY_TARGET = ["target"] in SurveyRun, SurveyUnavailable;
    SURVEY_METHOD = ["method"] in SurveyRun, SurveyUnavailable;
    SURVEY_BS = ["bs"] in SurveyRun, SurveyUnavailable;
    /// The run's result (a `RunResult`).
    SURVEY_RESULT = ["result"] in SurveyRun;
    /// A survey's run's ns/op of every round, in the order they ran.
    SURVEY_ROUNDS = ["rounds_ns_per_op"] in SurveyRun;
    /// A survey's run's rounds, each numbered, with whether the machine disturbed it.
    SURVEY_ROUND_RUNS = ["round_runs"] in SurveyRun;
    /// Inside one of `SURVEY_ROUND_RUNS`.
    ROUND_NUMBER = ["round"] in RoundRun;
    ROUND_NS_PER_OP = ["ns_per_op"] in RoundRun;
    ROUND_DISTURBED = ["disturbed"] in RoundRun;
    /// `--layers`: an op's mean time before the block layer, queued in it, on the device and after the
    /// completion (ns); absent in runs without it.
    LAYERS_BEFORE = ["layers", "before_ns"] in Run;
    LAYERS_QUEUED = ["layers", "queued_ns"] in Run;
    LAYERS_DEVICE = ["layers", "device_ns"] in Run;
    LAYERS_AFTER = ["layers", "after_ns"] in Run;
    /// Why the method could not run on the target.
    SURVEY_UNAVAILABLE = ["unavailable"] in SurveyUnavailable;
}

/// The places in a run's result (an iolab run's or a decimal-lines run's) the report reads: what a
/// record file is cut down to as it is read (`series::Keep::Paths`), and of a survey's runs their rounds.
/// Of an array's items (an interval, a memory reading, a finding, a round) only the fields the report
/// shows.
pub fn result_paths() -> Vec<Vec<&'static str>> {
    // The fields inside an array of a run (an array is no step of a path: see `series::Keep`).
    let mut out = Vec::new();
    for (f, held) in HELD {
        for h in *held {
            let arrays: &[Field] = match *h {
                "Run" | "Lines" => {
                    out.push(f.path().to_vec());
                    &[]
                }
                // A survey's run's rounds (its other keys are kept whole by every reader).
                "SurveyRun" if matches!(f.path(), ["rounds_ns_per_op" | "round_runs"]) => {
                    out.push(f.path().to_vec());
                    &[]
                }
                "RoundRun" => &[SURVEY_ROUND_RUNS],
                "Finding" => &[FINDINGS],
                "Interval" => &[INTERVALS],
                "MemPoint" => &[MEMORY_OVER_TIME],
                "Share" => &[PROFILE_GROUPS, PROFILE_TOP_SELF, PROFILE_TOP_INCLUSIVE],
                _ => &[],
            };
            for a in arrays {
                out.push([a.path(), f.path()].concat());
            }
        }
    }
    out
}

/// The profile group the storage paper's Figure 4 is about (`ProfileFigures::groups` names it so).
#[cfg(feature = "html")]
pub(crate) const COPY_GROUP: &str = iolab_lab::suite::COPY_GROUP;

/// The spec keys a chart's caption names when all its runs share them.
#[cfg(feature = "html")]
pub(crate) const SHARED_SPEC: [Field; 10] = [
    SPEC_METHOD,
    SPEC_OP,
    SPEC_PATTERN,
    SPEC_BS,
    SPEC_THREADS,
    SPEC_QD,
    SPEC_BATCH,
    SPEC_DIRECT,
    SPEC_TARGET,
    SPEC_LINES,
];

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use iolab_engine::measure::clock::ClockInfo;
    use iolab_engine::measure::hist::Summary;
    use iolab_engine::result::*;
    use iolab_engine::spec::RawSpec;
    use iolab_engine::target::TargetKind;
    use iolab_lab::lines::{LinesCpu, LinesResult, LinesSpec};

    /// A run result with every part the report reads present (the optional ones too).
    pub(crate) fn full_run() -> RunResult {
        let dist = Summary {
            count: 3,
            p50_ns: 100.0,
            cdf: vec![(0.0, 50.0), (1.0, 200.0)],
            buckets: vec![(64.0, 1), (128.0, 2)],
            ..Default::default()
        };
        RunResult {
            schema_version: SCHEMA_VERSION,
            // As a guest of `iolab vm` under TCG records it (accelerator is null elsewhere).
            host: Host {
                emulated: true,
                accelerator: Some("tcg".into()),
                ..Host::current()
            },
            // aio with one of its own options: `method_opts` is written only when one is given.
            spec: RawSpec::default()
                .with("method", "aio")
                .with("reap-at-most", 1u64)
                .resolve()
                .expect("the default spec with aio's own option resolves"),
            target: TargetInfo {
                kind: TargetKind::DevNull,
                created: false,
                kept: false,
                region_blocks_per_thread: 1,
                dio_align: None,
                peer: Some(Default::default()),
                fs: None,
                untouched: false,
                sparse: None,
            },
            clock: ClockInfo::mock(),
            timed: "t".into(),
            excluded: "e".into(),
            warmup: None,
            wall_s: 1.0,
            ops: 3,
            bytes: 12,
            iops: 3.0,
            mib_s: 1.0,
            ns_per_op: 1.0,
            latency: dist.clone(),
            gap: dist,
            latency_unavailable: None,
            gap_unavailable: None,
            flushes: Default::default(),
            cpu: Default::default(),
            disturbance: Some(iolab_engine::disturbance::Disturbance {
                runqueue_share: Some(0.0),
                steal_share: 0.0,
                psi_some: None,
                others_cpus: Some(0.0),
                verdict: "quiet".into(),
                why: None,
            }),
            syscalls: SyscallFigures {
                method_count: Some(3),
                method_per_op: Some(1.0),
                ..Default::default()
            },
            uring: Some(UringFigures {
                batch_histogram: vec![(1, 3)],
                inflight_histogram: vec![(1, 3)],
                ..Default::default()
            }),
            aio: Some(Default::default()),
            nowait: Some(Default::default()),
            method_figures: vec![iolab_engine::spec::Figure::new(
                "taken",
                3.0,
                "reads",
                "reads that named a buffer",
            )],
            memory: Some(iolab_engine::memlimit::MemoryLimit {
                over_time: vec![iolab_engine::memwatch::MemPoint {
                    t_s: 0.1,
                    page_cache: 1 << 20,
                    limit_hits: 1,
                    reclaimed_pages: 1,
                }],
                ..Default::default()
            }),
            mixed: None,
            paced: None,
            access: None,
            layers: Some(Default::default()),
            device_io: None,
            per_thread: vec![Default::default()],
            verify: Some(Default::default()),
            kernel: Default::default(),
            derived: Default::default(),
            findings: vec![Finding {
                rule: "r".into(),
                text: "a finding".into(),
            }],
            fallbacks: vec![],
            notes: vec![],
            offload: Some(iolab_engine::result::OffloadFigures {
                client_cycles: Some(iolab_engine::offload::cycles::ClientCycles {
                    per_request_ns: Some(1.0),
                    ..Default::default()
                }),
                server_sleeps: Some(0),
                ..Default::default()
            }),
            profile: Some(profile()),
            intervals: vec![IntervalFigures {
                end_s: 1.0,
                ops: 3,
                iops: 3.0,
                lat_p99_ns: Some(100.0),
                ..Default::default()
            }],
            sink: Some(Default::default()),
            iopoll: Some(Default::default()),
            sparse_clock: None,
            op_log: None,
        }
    }

    /// A profile of a buffered write, as `--profile` records it.
    fn profile() -> ProfileFigures {
        let share = |name: &str, kernel: bool, samples: u64| ProfileShare {
            name: name.into(),
            kernel,
            samples,
            share: samples as f64 / 1000.0,
        };
        ProfileFigures {
            pass: "separate".into(),
            event: "cpu-clock".into(),
            frequency_hz: 997,
            samples: 1000,
            lost: 0,
            unsymbolized: vec!["user frames: no symbols".into()],
            groups: vec![share(COPY_GROUP, true, 800), share("iolab", false, 200)],
            top_self: vec![share("rep_movs_alternative", true, 800)],
            top_inclusive: vec![share("vfs_write", true, 800)],
            folded: vec![
                "iolab-w;entry_SYSCALL_64;do_syscall_64;ksys_write;vfs_write;rep_movs_alternative 800"
                    .into(),
                "iolab-w;iolab::runner::loops 200".into(),
            ],
            notes: vec!["a note".into()],
            shares: None,
        }
    }

    fn lines_result() -> LinesResult {
        LinesResult {
            workload: "decimal-lines".into(),
            spec: LinesSpec {
                method: "stdio".into(),
                lines: 10,
                target: "/tmp/x".into(),
            },
            wall_s: 1.0,
            write_s: Some(0.5),
            fsync_s: Some(0.5),
            bytes: 20,
            ns_per_line: 1.0,
            cpu_ns_per_line: 1.0,
            cpu: LinesCpu {
                process: Default::default(),
            },
            write_calls: Some(1),
            method_calls: None,
            render_cpu_s: None,
            disturbance: None,
            timed: "t".into(),
            excluded: "e".into(),
            verified: true,
            host: iolab_engine::result::Host::current(),
        }
    }

    #[test]
    fn every_field_is_in_each_document_said_to_hold_it() {
        let run = serde_json::to_value(full_run()).unwrap();
        let lines = serde_json::to_value(lines_result()).unwrap();
        let point = [("step".to_string(), "a".to_string())];
        let record = series::record(&point, Ok(run.clone()));
        let error_record = series::record(&point, Err((2, "why".into())));
        let finding = FINDINGS.at(&run).and_then(|f| f.get(0)).unwrap().clone();
        let share = PROFILE_GROUPS
            .at(&run)
            .and_then(|f| f.get(0))
            .unwrap()
            .clone();
        let survey_run = |ran: bool| {
            serde_json::to_value(iolab_lab::survey::SurveyRun {
                target: "/dev/null".into(),
                method: iolab_engine::method::MethodKind::Sync,
                bs: 4,
                result: ran.then(full_run),
                unavailable: (!ran).then(|| "why".into()),
                rounds_ns_per_op: vec![1.0],
                round_runs: vec![iolab_lab::rounds::RoundRun {
                    round: 1,
                    ns_per_op: 1.0,
                    disturbed: false,
                }],
                rounds_disturbed: 0,
                steal_s: ran.then_some(0.0),
                verdict: None,
            })
            .unwrap()
        };
        let (survey_ran, survey_not) = (survey_run(true), survey_run(false));
        let round_run = SURVEY_ROUND_RUNS
            .at(&survey_ran)
            .and_then(|f| f.get(0))
            .unwrap()
            .clone();
        let interval = INTERVALS.at(&run).and_then(|f| f.get(0)).unwrap().clone();
        let mem_point = MEMORY_OVER_TIME
            .at(&run)
            .and_then(|f| f.get(0))
            .unwrap()
            .clone();
        for (name, field, holders) in ALL {
            for h in *holders {
                let doc: &Value = match h {
                    Holder::Record => &record,
                    Holder::ErrorRecord => &error_record,
                    Holder::Run => &run,
                    Holder::Lines => &lines,
                    Holder::Finding => &finding,
                    Holder::Share => &share,
                    Holder::Interval => &interval,
                    Holder::MemPoint => &mem_point,
                    Holder::SurveyRun => &survey_ran,
                    Holder::SurveyUnavailable => &survey_not,
                    Holder::RoundRun => &round_run,
                };
                assert!(
                    field.at(doc).is_some_and(|v| !v.is_null()),
                    "{name} ({:?}) is not in a {h:?} document",
                    field.0
                );
            }
        }
        // A run's result is no decimal-lines result.
        assert!(WORKLOAD.at(&run).is_none());
    }

    #[test]
    fn histograms_are_pairs_of_numbers() {
        let run = serde_json::to_value(full_run()).unwrap();
        for f in [LATENCY_CDF, GAP_BUCKETS, URING_BATCHES] {
            let first = f.at(&run).and_then(|a| a.get(0)).unwrap();
            let pair = first.as_array().unwrap();
            assert!(
                pair.len() == 2 && pair.iter().all(|v| v.as_f64().is_some()),
                "{:?}: {first}",
                f.0
            );
        }
    }

    /// Every value the HTML report reads from a record goes through a field of the table above.
    #[test]
    fn the_report_reads_records_only_through_fields() {
        for (file, src) in [
            ("html.rs", include_str!("html.rs")),
            ("html/page.rs", include_str!("html/page.rs")),
            ("html/charts.rs", include_str!("html/charts.rs")),
            ("html/flame.rs", include_str!("html/flame.rs")),
            ("html/axis.rs", include_str!("html/axis.rs")),
            ("html/dist.rs", include_str!("html/dist.rs")),
            ("html/vary.rs", include_str!("html/vary.rs")),
            ("html/timeline.rs", include_str!("html/timeline.rs")),
        ] {
            let code = src.split("#[cfg(test)]").next().unwrap();
            for bad in [".get(\"", "series::at(", "series::num(", "series::text("] {
                assert!(!code.contains(bad), "{file} reads a record by `{bad}`");
            }
            // Indexing by a key: `v["key"]` (a `["` right after a name or a bracket).
            let b = code.as_bytes();
            for i in code.match_indices("[\"").map(|(i, _)| i) {
                let prev = b[..i].last().copied().unwrap_or(b' ');
                assert!(
                    !(prev.is_ascii_alphanumeric() || b"_)]".contains(&prev)),
                    "{file} indexes a record by a key: {}",
                    &code[i.saturating_sub(20)..(i + 20).min(code.len())]
                );
            }
        }
    }
}
