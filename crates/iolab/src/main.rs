//! The `iolab` command: argument parsing, progress and exit codes only; everything else is iolab-core.
//!
//! Exit codes: 0 success; 1 a kernel error at run time (the message names the syscall, errno and a hint)
//! or a `--verify` mismatch; 2 bad input (one line naming the flag and what it accepts); 3 `compare`
//! found a regression beyond `--fail-on-regression`; 130 interrupted.

use clap::{Args, Parser, Subcommand};
use iolab_core::error::Error;
use iolab_core::measure::clock;
use iolab_core::series;
use iolab_core::spec::{RawSpec, Val};
use iolab_report::{Exporter, JsonExporter, TableExporter};
use std::io::Write;
use std::path::{Path, PathBuf};

const ABOUT: &str =
    "iolab: a Linux I/O methods laboratory. For a target and a workload, which way of talking \
to the kernel is fastest, and what does each way cost (CPU, syscalls, faults, context switches)?";

const AFTER: &str = "Without a command, iolab runs `survey`: every method writing 4 B and 4 KiB blocks to /dev/null \
and to a fresh file in a new temporary directory (under 40 s), ranked per target, JSON in ./iolab-results/.
It touches no existing file.

Exit status: 0 ok; 1 kernel error at run time or --verify mismatch; 2 bad input; 3 compare found a regression (--fail-on-regression); 130 interrupted.";

#[derive(Parser)]
#[command(name = "iolab", version, about = ABOUT, after_help = AFTER)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// The main job: every method writing 4 B and 4 KiB blocks to /dev/null and a fresh temporary file.
    Survey(SurveyArgs),
    /// Run one workload, given by flags or a TOML spec file (flags override the file).
    Run(Box<RunArgs>),
    /// Harness overhead: `run --method psync --target /dev/null --bs 4` against a bare write() loop.
    Bench(BenchArgs),
    /// Every method and option: available or not, with the reason found by actually trying.
    Probe(ProbeArgs),
    /// Run every point of the product of --vary lists (one result per point, kept as each finishes).
    Sweep(Box<SweepArgs>),
    /// Matching runs of two result files side by side, with ratios and a noise verdict.
    Compare(CompareArgs),
    /// Run a seed experiment as a named suite (suites/*.toml): its table next to the seed's.
    Suite(SuiteArgs),
    /// One self-contained HTML file (inline SVG charts) from result files.
    Report(ReportArgs),
}

#[derive(Args)]
struct SuiteArgs {
    /// A built-in suite (see --list) or a path to a suite .toml file.
    #[arg(required_unless_present = "list")]
    name: Option<String>,
    /// The suites with one line each, and the seed each reproduces.
    #[arg(long)]
    list: bool,
    /// Scaled down to under a minute (the suite's [quick] amounts): a smoke test, not a measurement.
    #[arg(long)]
    quick: bool,
    /// The record file: one JSON line per point, synced as each finishes [default: a new
    /// iolab-results/suite-NAME-<UTC time>.jsonl]. An existing file is refused unless --resume.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Continue the suite recorded in --out: points already there are not run again.
    #[arg(long, requires = "out")]
    resume: bool,
    /// Write one CSV row per point to FILE (columns in the README). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Where the "disk" files go (a new directory inside it, removed at the end) [default: /var/tmp].
    #[arg(long, value_name = "DIR", default_value = "/var/tmp")]
    disk_dir: PathBuf,
    /// Where the tmpfs files go (a new directory inside it, removed at the end) [default: /dev/shm].
    #[arg(long, value_name = "DIR", default_value = "/dev/shm")]
    tmpfs_dir: PathBuf,
}

#[derive(Args)]
struct ReportArgs {
    /// Result files: sweep or suite records (.jsonl), `run --json` or `run --repeat --json` documents.
    #[arg(required = true, value_name = "RESULTS")]
    results: Vec<PathBuf>,
    /// The HTML file to write (an existing file is not replaced).
    #[arg(
        short = 'o',
        long = "out",
        value_name = "FILE",
        default_value = "report.html"
    )]
    out: PathBuf,
    /// Also write each chart alone as DIR/<name>.svg (DIR is created; existing files are not replaced).
    #[arg(long, value_name = "DIR")]
    svg: Option<PathBuf>,
}

#[derive(Args)]
struct SweepArgs {
    /// KEY=V1,V2,...: a spec key (a run flag without dashes: method, bs, qd, threads, direct, ring,
    /// target ...) and its values; repeat for more keys. Points run in a stable order, the first --vary
    /// changing slowest.
    #[arg(long, value_name = "KEY=V1,V2", required = true)]
    vary: Vec<String>,
    /// The record file: one JSON line per point, written and synced as each point finishes [default: a new
    /// iolab-results/sweep-<UTC time>.jsonl]. An existing file is refused unless --resume.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Continue the sweep recorded in --out: points already there are not run again.
    #[arg(long, requires = "out")]
    resume: bool,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Args)]
struct CompareArgs {
    /// The baseline: a `run --json` file, a `run --repeat --json` file or a sweep's record file.
    a: PathBuf,
    /// The candidate, in any of the same forms.
    b: PathBuf,
    /// Exit 3 when a matching workload is slower in B by more than PCT percent and beyond the noise.
    #[arg(long, value_name = "PCT")]
    fail_on_regression: Option<String>,
}

#[derive(Args)]
struct SurveyArgs {
    /// Directory for the JSON result (created if missing; a new file is always made).
    #[arg(long, value_name = "DIR", default_value = "iolab-results")]
    results_dir: PathBuf,
    /// Where to create the temporary directory for the file runs [default: $TMPDIR or /tmp].
    #[arg(long, value_name = "DIR")]
    tmp_dir: Option<PathBuf>,
    /// Ops per run (each run also stops after --max-seconds).
    #[arg(long, value_name = "N")]
    ops: Option<String>,
    /// Time bound per run in seconds.
    #[arg(long, value_name = "SECS")]
    max_seconds: Option<String>,
    /// Do not write the JSON result.
    #[arg(long)]
    no_json: bool,
}

#[derive(Args)]
struct ProbeArgs {
    /// Write the probe result (JSON) to FILE ("-" for stdout). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

#[derive(Args)]
struct BenchArgs {
    /// overhead: iolab psync vs a bare write() loop | counters: write() with and without kernel counters |
    /// nop: io_uring NOPs per second through iolab vs a raw loop | offload: NOP round trips (batch 1) and
    /// throughput (batch 32) through the offload paths, as ratios to native.
    #[arg(default_value = "overhead")]
    which: String,
    /// Ops per round.
    #[arg(long, default_value = "300000")]
    ops: String,
    /// Rounds (each: one bare loop, then one iolab run).
    #[arg(long, default_value = "21")]
    rounds: String,
}

#[derive(Args)]
#[command(next_help_heading = "Workload")]
struct RunArgs {
    /// TOML spec file; keys are the flag names without dashes (bs = "4k", file-size = "64m", qd = 8).
    #[arg(long, value_name = "FILE")]
    spec: Option<PathBuf>,
    /// Write the result document (JSON) to FILE ("-" for stdout). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Run the workload N times; report each figure's median, min, max and standard deviation, and say
    /// when the spread is too wide to trust a comparison [default: 1].
    #[arg(long, value_name = "N")]
    repeat: Option<String>,
    /// Write one CSV row per run to FILE (columns in the README). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,

    /// A regular file (created if missing), /dev/null (write sink), /dev/zero (read source) or a block device [default: /dev/null].
    #[arg(long, value_name = "PATH")]
    target: Option<String>,
    /// sync: write/read at the file position | psync: pwrite/pread | vectored: pwritev/preadv (--iovecs) |
    /// stdio: glibc fwrite/fread on a fully buffered FILE (_IOFBF, --stdio-buffer, default 4096 bytes, as glibc picks
    /// for files) | mmap: memcpy into/out of a MAP_SHARED mapping (--msync) | io_uring: a ring per thread (--qd, --batch,
    /// ring options below) | aio: Linux native AIO, io_submit/io_getevents (--qd, --batch) |
    /// splice, sendfile, copy_file_range: kernel-side copies from a source file iolab fills, no user-space
    /// copy (writes only) | offload: a sandboxed client process (seccomp strict) doing I/O through rings in shared
    /// memory (--offload-path) | nop: no kernel call, the harness's floor [default: psync].
    #[arg(long, value_name = "METHOD", verbatim_doc_comment)]
    method: Option<String>,
    /// write or read [default: write].
    #[arg(long, value_name = "OP")]
    op: Option<String>,
    /// seq or rand (uniform over the thread's region, replayable) [default: seq].
    #[arg(long, value_name = "PATTERN")]
    pattern: Option<String>,
    /// Bytes per op: 4, 512, 4k, 4KiB, 1m, 1MiB (powers of 1024) [default: 4k].
    #[arg(long, value_name = "SIZE")]
    bs: Option<String>,
    /// Total ops over all threads (1000, 1_000_000, 100k, 1M) [default: 100000, capped at 10 s].
    #[arg(long, value_name = "N")]
    ops: Option<String>,
    /// Total bytes over all threads (a whole number of --bs blocks); instead of --ops.
    #[arg(long, value_name = "BYTES")]
    size: Option<String>,
    /// Time bound (5, 2.5s, 500ms, 1m); with --ops or --size, whichever comes first.
    #[arg(long, value_name = "SECS")]
    duration: Option<String>,
    /// Threads, each with its own descriptor (and ring) and its own region of the target [default: 1].
    #[arg(long, value_name = "N")]
    threads: Option<String>,
    /// O_DIRECT with aligned buffers (--bs and --offset must be multiples of the device's alignment).
    #[arg(long)]
    direct: bool,
    /// none | end | every:N (timed, not in per-op latency) [default: none].
    #[arg(long, value_name = "WHEN")]
    fsync: Option<String>,
    /// Size of a file iolab creates, shared by the threads' regions; writes wrap around it [default: ops x bs, or 64 MiB for --duration runs].
    #[arg(long, value_name = "SIZE")]
    file_size: Option<String>,
    /// Byte offset in the target where the first region starts [default: 0].
    #[arg(long, value_name = "BYTES")]
    offset: Option<String>,
    /// Seed of the data pattern and random offsets [default: a fresh one, recorded in the result].
    #[arg(long, value_name = "N")]
    seed: Option<String>,

    #[command(flatten)]
    method_opts: MethodOpts,
    #[command(flatten)]
    safety: SafetyOpts,
}

#[derive(Args)]
#[command(next_help_heading = "Method options")]
struct MethodOpts {
    /// vectored: iovecs per op (the block split evenly) [default: 1].
    #[arg(long, value_name = "N")]
    iovecs: Option<String>,
    /// io_uring, aio: requests in flight [default: 1].
    #[arg(long, value_name = "N")]
    qd: Option<String>,
    /// io_uring, aio: requests per io_uring_enter / io_submit (at most --qd); offload: requests per round trip [default: 1].
    #[arg(long, value_name = "N")]
    batch: Option<String>,
    /// mmap: none | end | every:N msync(MS_SYNC) of the mapping [default: none].
    #[arg(long, value_name = "WHEN")]
    msync: Option<String>,
    /// stdio: FILE buffer size given to setvbuf(_IOFBF) [default: 4096].
    #[arg(long, value_name = "SIZE")]
    stdio_buffer: Option<String>,
    /// io_uring: IORING_SETUP_SQPOLL (5.1+; unprivileged since 5.11): a kernel thread (iou-sqp) polls the
    /// submission queue; it burns a CPU while awake, reported separately.
    #[arg(long)]
    sqpoll: bool,
    /// io_uring --sqpoll: sq_thread_idle, ms before the SQPOLL thread sleeps [default: 1000].
    #[arg(long, value_name = "MS")]
    sq_idle_ms: Option<String>,
    /// io_uring --sqpoll: IORING_SETUP_SQ_AFF, the CPU the SQPOLL thread is bound to.
    #[arg(long, value_name = "CPU")]
    sq_cpu: Option<String>,
    /// io_uring: IORING_SETUP_IOPOLL (5.1+): busy-poll for completions; needs --direct and a device with
    /// poll queues (refused with the reason otherwise).
    #[arg(long)]
    iopoll: bool,
    /// io_uring: IORING_REGISTER_FILES (5.1+): the target fd registered, IOSQE_FIXED_FILE.
    #[arg(long)]
    fixed_files: bool,
    /// io_uring: IORING_REGISTER_BUFFERS (5.1+): op buffers registered, READ_FIXED/WRITE_FIXED; counts
    /// against RLIMIT_MEMLOCK unless root.
    #[arg(long)]
    fixed_bufs: bool,
    /// io_uring: IORING_SETUP_COOP_TASKRUN (5.19+).
    #[arg(long)]
    coop_taskrun: bool,
    /// io_uring: IORING_SETUP_SINGLE_ISSUER (6.0+).
    #[arg(long)]
    single_issuer: bool,
    /// io_uring: IORING_SETUP_DEFER_TASKRUN (6.1+, needs --single-issuer): completions run only when the
    /// submitter waits.
    #[arg(long)]
    defer_taskrun: bool,
    /// io_uring: IORING_REGISTER_RING_FDS (5.18+): io_uring_enter by registered index.
    #[arg(long)]
    registered_ring: bool,
    /// io_uring: IORING_OP_READV/WRITEV with one iovec instead of READ/WRITE.
    #[arg(long, conflicts_with = "nonvectored")]
    vectored: bool,
    /// io_uring: IORING_OP_READ/WRITE (the default).
    #[arg(long)]
    nonvectored: bool,
    /// io_uring, offload: submit IORING_OP_NOP instead of I/O (the ring's own cost; the target is not touched).
    #[arg(long)]
    nop_requests: bool,
    /// offload: kernel (an io_uring in the shared memfd, SQPOLL, registered file and buffer, restrictions) |
    /// broker (iolab's request ring, a broker thread that copies, checks and runs each request) | native
    /// (the same requests from an unsandboxed client with io_uring_enter) [default: kernel].
    #[arg(long, value_name = "PATH")]
    offload_path: Option<String>,
    /// offload --offload-path broker: spin | spin-then-sleep (spin 50 us, then sleep on an eventfd the
    /// client rings) | eventfd (sleep whenever idle; the client rings every batch) [default: spin-then-sleep].
    #[arg(long, value_name = "MODE")]
    doorbell: Option<String>,
    /// offload: test the sandbox: the client also makes these forbidden requests (comma list): opcode,
    /// raw-fd, slot, buf-addr, buf-len, rewrite (broker), syscall, crash. Each must be refused with an error
    /// completion, and iolab's canary page and unrelated file must stay unchanged (exit 1 otherwise);
    /// syscall and crash end the client mid-run (exit 1, reported).
    #[arg(long, value_name = "LIST")]
    offload_attack: Option<String>,
    /// io_uring: per-thread (a ring per thread) | shared (one ring, a mutex around submit/reap/wait, as
    /// the seed course report) | shared-submitter (one ring fed by a submitter thread through lock-free
    /// per-thread queues) [default: per-thread].
    #[arg(long, value_name = "DESIGN")]
    ring: Option<String>,
}

#[derive(Args)]
#[command(next_help_heading = "Checking, safety and counting")]
struct SafetyOpts {
    /// After a write run, read the target back and check every written block; exit 1 on a mismatch.
    #[arg(long)]
    verify: bool,
    /// Allow writing into an existing regular file iolab did not create.
    #[arg(long)]
    overwrite: bool,
    /// Keep the file iolab created (it is removed at exit otherwise, also on Ctrl-C).
    #[arg(long)]
    keep: bool,
    /// Allow writing to a block device (always refused while it or a partition is mounted).
    #[arg(long)]
    allow_device_writes: bool,
    /// Kernel tracepoints (syscalls made, io_uring requests and punts, per-syscall breakdown): separate = a
    /// second, untimed pass of the same workload; inline = during the timed pass (each syscall ~30% dearer);
    /// none. Software counters (context switches, faults) are always on [default: separate].
    #[arg(long, value_name = "MODE")]
    count: Option<String>,
    /// Count only totals in the counting pass, no per-syscall breakdown (faster: releasing each traced
    /// syscall's tracepoint waits for an RCU grace period).
    #[arg(long)]
    no_breakdown: bool,
}

impl RunArgs {
    fn raw(&self) -> RawSpec {
        let s = |o: &Option<String>| o.as_ref().map(|v| Val::Str(v.clone()));
        let b = |f: bool| if f { Some(Val::Bool(true)) } else { None };
        let m = &self.method_opts;
        RawSpec {
            target: s(&self.target),
            method: s(&self.method),
            op: s(&self.op),
            pattern: s(&self.pattern),
            bs: s(&self.bs),
            ops: s(&self.ops),
            size: s(&self.size),
            duration: s(&self.duration),
            threads: s(&self.threads),
            direct: b(self.direct),
            fsync: s(&self.fsync),
            msync: s(&m.msync),
            iovecs: s(&m.iovecs),
            qd: s(&m.qd),
            batch: s(&m.batch),
            stdio_buffer: s(&m.stdio_buffer),
            file_size: s(&self.file_size),
            offset: s(&self.offset),
            seed: s(&self.seed),
            verify: b(self.safety.verify),
            overwrite: b(self.safety.overwrite),
            keep: b(self.safety.keep),
            allow_device_writes: b(self.safety.allow_device_writes),
            count: s(&self.safety.count),
            sqpoll: b(m.sqpoll),
            sq_idle_ms: s(&m.sq_idle_ms),
            sq_cpu: s(&m.sq_cpu),
            iopoll: b(m.iopoll),
            fixed_files: b(m.fixed_files),
            fixed_bufs: b(m.fixed_bufs),
            coop_taskrun: b(m.coop_taskrun),
            single_issuer: b(m.single_issuer),
            defer_taskrun: b(m.defer_taskrun),
            registered_ring: b(m.registered_ring),
            nop_requests: b(m.nop_requests),
            ring: s(&m.ring),
            offload_path: s(&m.offload_path),
            doorbell: s(&m.doorbell),
            offload_attack: s(&m.offload_attack),
            vectored: if m.vectored {
                Some(Val::Bool(true))
            } else if m.nonvectored {
                Some(Val::Bool(false))
            } else {
                None
            },
            breakdown: if self.safety.no_breakdown {
                Some(Val::Bool(false))
            } else {
                None
            },
        }
    }
}

fn fail(e: &Error) -> ! {
    eprintln!("iolab: {e}");
    std::process::exit(e.exit_code());
}

/// Refuses an existing --json file before the run, so nothing is overwritten and no run is wasted.
fn check_json_path(p: &Path) -> Result<(), Error> {
    check_new_path("--json", p)
}

fn check_new_path(flag: &str, p: &Path) -> Result<(), Error> {
    if p == Path::new("-") {
        return Ok(());
    }
    if p.exists() {
        return Err(Error::usage(
            flag,
            format!(
                "{} exists; iolab does not replace files: choose a new name or remove it",
                p.display()
            ),
        ));
    }
    match p.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) if !d.is_dir() => Err(Error::usage(
            flag,
            format!("the directory {} does not exist", d.display()),
        )),
        _ => Ok(()),
    }
}

fn write_new(flag: &str, p: &Path, bytes: &[u8]) -> Result<(), Error> {
    if p == Path::new("-") {
        std::io::stdout()
            .write_all(bytes)
            .map_err(|e| Error::Runtime(format!("stdout: {e}")))?;
        return Ok(());
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
        .map_err(|e| Error::Runtime(format!("cannot create {flag} {}: {e}", p.display())))?;
    f.write_all(bytes)
        .map_err(|e| Error::Runtime(format!("cannot write {flag} {}: {e}", p.display())))
}

fn write_json(p: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_new("--json", p, bytes)
}

fn cmd_run(a: &RunArgs) -> Result<i32, Error> {
    let file = match &a.spec {
        Some(p) => RawSpec::from_toml_file(p)?,
        None => RawSpec::default(),
    };
    let spec = file.merge(a.raw()).resolve()?;
    if let Some(j) = &a.json {
        check_json_path(j)?;
    }
    if let Some(c) = &a.csv {
        check_new_path("--csv", c)?;
    }
    let repeat = match &a.repeat {
        None => 1,
        Some(n) => match iolab_core::units::parse_count(n) {
            Ok(0) => {
                return Err(Error::usage(
                    "--repeat",
                    "0 is not accepted; expected 1 or more runs",
                ))
            }
            Ok(k) => k as usize,
            Err(m) => return Err(Error::usage("--repeat", m)),
        },
    };
    iolab_core::cleanup::install_signal_handler();
    let clk = clock::calibrate(20);
    if repeat > 1 {
        return run_repeated(a, &spec, &clk, repeat);
    }
    let bar = if a.json.as_deref() == Some(Path::new("-")) {
        None
    } else {
        RunBar::start(&spec)
    };
    let r = iolab_core::runner::run_with(&spec, &clk, bar.as_ref().map(|b| &b.shm[0]));
    if let Some(b) = bar {
        b.stop();
    }
    let r = r?;
    if let Some(c) = &a.csv {
        let rec = series::record(&[], Ok(to_value(&r)?));
        write_new(
            "--csv",
            c,
            (series::csv_header(&[]) + &series::csv_row(&rec, &[])).as_bytes(),
        )?;
    }
    let text = TableExporter.run(&r);
    if a.json.as_deref() == Some(Path::new("-")) {
        // Keep stdout machine-readable: the table goes to stderr.
        std::io::stderr().write_all(&text).ok();
    } else {
        std::io::stdout().write_all(&text).ok();
    }
    if let Some(j) = &a.json {
        write_json(j, &JsonExporter.run(&r))?;
    }
    if let Some(v) = &r.verify {
        if v.mismatches > 0 {
            eprintln!(
                "iolab: verify: {} of {} blocks differ from what was written (first at byte offset {})",
                v.mismatches,
                v.blocks_checked,
                v.first_mismatch_offsets.first().copied().unwrap_or(0)
            );
            return Ok(1);
        }
    }
    Ok(0)
}

fn to_value(r: &iolab_core::result::RunResult) -> Result<serde_json::Value, Error> {
    serde_json::to_value(r).map_err(|e| Error::Runtime(format!("result JSON: {e}")))
}

/// `run --repeat N`: N runs of one workload, each printed as one line, then the statistics of every figure.
fn run_repeated(
    a: &RunArgs,
    spec: &iolab_core::spec::Spec,
    clk: &clock::ClockInfo,
    n: usize,
) -> Result<i32, Error> {
    let to_stderr = a.json.as_deref() == Some(Path::new("-"));
    let say = |t: String| {
        if to_stderr {
            eprint!("{t}");
        } else {
            print!("{t}");
        }
    };
    let mut runs = Vec::with_capacity(n);
    let mut mismatches = 0u64;
    // The bar moves between runs only (see Progress): a ticking thread would change what is measured.
    let progress = Progress::new("run --repeat", if to_stderr { 0 } else { n });
    for i in 0..n {
        let r = iolab_core::runner::run(spec, clk)?;
        if let Some(b) = &progress.bar {
            b.inc(1);
        }
        if i == 0 {
            // The first run's header says what runs (the workload is the same for all).
            let text = String::from_utf8_lossy(&TableExporter.run(&r)).to_string();
            say(text.lines().next().unwrap_or_default().to_string() + "\n");
        }
        let say = |t: String| match &progress.bar {
            Some(b) => b.suspend(|| say(t)),
            None => say(t),
        };
        say(format!(
            "run {:>3}/{n}   {:>12.0} ops/s  {:>10.1} MiB/s  {:>10.1} ns/op  p50 {:>9.0} ns  p99 {:>9.0} ns\n",
            i + 1,
            r.iops,
            r.mib_s,
            r.ns_per_op,
            r.latency.p50_ns,
            r.latency.p99_ns
        ));
        mismatches += r.verify.as_ref().map_or(0, |v| v.mismatches);
        runs.push(to_value(&r)?);
    }
    progress.finish();
    let summary = series::summarize(&runs);
    say(series::render_summary(&summary));
    if let Some(c) = &a.csv {
        let mut text = series::csv_header(&[]);
        for r in &runs {
            text += &series::csv_row(&series::record(&[], Ok(r.clone())), &[]);
        }
        write_new("--csv", c, text.as_bytes())?;
    }
    if let Some(j) = &a.json {
        let mut v =
            serde_json::to_vec_pretty(&serde_json::json!({ "repeat": summary, "runs": runs }))
                .map_err(|e| Error::Runtime(format!("result JSON: {e}")))?;
        v.push(b'\n');
        write_json(j, &v)?;
    }
    if mismatches > 0 {
        eprintln!("iolab: verify: {mismatches} blocks differ from what was written");
        return Ok(1);
    }
    Ok(0)
}

fn cmd_sweep(a: &SweepArgs) -> Result<i32, Error> {
    let vary: Vec<series::Vary> = a
        .vary
        .iter()
        .map(|v| series::parse_vary(v))
        .collect::<Result<_, _>>()?;
    if let Some(r) = &a.run.repeat {
        return Err(Error::usage(
            "--repeat",
            format!("'{r}' is for `run`; a sweep runs each point once (add a --vary seed=1,2,3 for repeats)"),
        ));
    }
    let base = match &a.run.spec {
        Some(p) => RawSpec::from_toml_file(p)?,
        None => RawSpec::default(),
    }
    .merge(a.run.raw());
    let points = series::points(&vary);
    // Every point is resolved before anything runs. A value no point can use is bad input (a typo);
    // a point whose combination does not apply (--qd with psync) is recorded as not run, with the reason.
    let mut resolved = Vec::with_capacity(points.len());
    for p in &points {
        resolved.push(base.clone().merge(series::point_raw(p)?).resolve());
    }
    for v in &vary {
        for val in &v.values {
            let mut with = points
                .iter()
                .zip(&resolved)
                .filter(|(p, _)| p.iter().any(|(k, x)| k == &v.key && x == val));
            // The value itself is bad when every point with it fails naming its own flag.
            let own = format!("--{}:", v.key);
            if let Some((p, Err(e))) = with.clone().next() {
                if with.all(|(_, r)| matches!(r, Err(e) if e.to_string().starts_with(&own))) {
                    return Err(Error::usage(
                        "--vary",
                        format!("{}: {e}", series::point_label(p)),
                    ));
                }
            }
        }
    }
    if let Some(j) = &a.run.json {
        return Err(Error::usage(
            "--json",
            format!(
                "{}: a sweep writes its results to --out (one JSON line per point)",
                j.display()
            ),
        ));
    }
    if let Some(c) = &a.run.csv {
        check_new_path("--csv", c)?;
    }
    let mut rec = series::Recorder::open(a.out.as_deref(), a.resume, "sweep")?;
    if rec.dropped > 0 {
        eprintln!(
            "iolab: {}: the last line was cut short ({} bytes, a point interrupted while being written); that point runs again",
            rec.path.display(),
            rec.dropped
        );
    }
    iolab_core::cleanup::install_signal_handler();
    let clk = clock::calibrate(20);
    let keys: Vec<String> = vary.iter().map(|v| v.key.clone()).collect();
    let n = points.len();
    let skipped = points.iter().filter(|p| rec.has(p)).count();
    println!(
        "iolab sweep: {n} points ({}), records in {}{}",
        vary.iter()
            .map(|v| format!("{} x{}", v.key, v.values.len()))
            .collect::<Vec<_>>()
            .join(", "),
        rec.path.display(),
        if skipped > 0 {
            format!("; {skipped} already recorded, not run again")
        } else {
            String::new()
        }
    );
    let jobs = points
        .iter()
        .cloned()
        .zip(resolved)
        .map(|(point, spec)| series::Job {
            point,
            work: series::Work::Run(spec),
        })
        .collect();
    let mut progress = Progress::new("sweep", n - skipped);
    let failed = series::run_jobs(jobs, &mut rec, &clk, &mut |ev| progress.event(&ev))?;
    progress.finish();
    if let Some(c) = &a.run.csv {
        let mut text = series::csv_header(&keys);
        for p in &points {
            if let Some(r) = rec.done.iter().find(|r| series::is_point(r, p)) {
                text += &series::csv_row(r, &keys);
            }
        }
        write_new("--csv", c, text.as_bytes())?;
    }
    println!(
        "result: {} ({n} points, {failed} not run this time)",
        rec.path.display()
    );
    Ok(0)
}

/// Per-point lines on stdout, and on a terminal's stderr a progress bar with ETA between points. The bar
/// is drawn only when a point starts or ends (no ticking thread: a second thread in a one-thread run
/// makes every syscall of it dearer, see cleanup.rs).
struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    fn new(what: &str, n: usize) -> Progress {
        let bar = (n > 0 && iolab_core::sys::isatty(2)).then(|| {
            let b = indicatif::ProgressBar::with_draw_target(
                Some(n as u64),
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(st) = indicatif::ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} points, {elapsed} so far, ETA {eta}  {wide_msg}",
            ) {
                b.set_style(st.progress_chars("=> "));
            }
            b.set_prefix(format!("iolab {what}"));
            b
        });
        Progress { bar }
    }

    fn say(&self, line: String) {
        match &self.bar {
            Some(b) => b.suspend(|| println!("{line}")),
            None => println!("{line}"),
        }
    }

    fn event(&mut self, ev: &series::Event) {
        match ev {
            series::Event::Start { label, .. } => {
                if let Some(b) = &self.bar {
                    b.set_message(label.to_string());
                }
            }
            series::Event::Done { i, n, label, rec } => {
                self.say(point_line(*i, *n, label, rec));
                if let Some(b) = &self.bar {
                    b.inc(1);
                }
            }
            series::Event::Skipped { .. } => {}
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// `iolab run`'s progress bar with ETA, on a terminal's stderr, once a run has taken a second. A forked
/// helper process draws it from a counter in shared memory the workers add to every 1024 ops: the
/// measured process gains no thread (a second thread makes a one-thread run's syscalls dearer, see
/// cleanup.rs) and writes nothing to the terminal while it is timed.
struct RunBar {
    pid: i32,
    shm: &'static [std::sync::atomic::AtomicU64; 2],
}

impl RunBar {
    fn start(spec: &iolab_core::spec::Spec) -> Option<RunBar> {
        use std::sync::atomic::Ordering;
        if !iolab_core::sys::isatty(2) {
            return None;
        }
        let shm = iolab_core::sys::shared_counters().ok()?;
        let (ops, dur) = (spec.ops, spec.duration_s);
        match iolab_core::sys::fork() {
            Ok(0) => {
                let _ = iolab_core::sys::child_dies_with_parent();
                let t0 = std::time::Instant::now();
                let mut moving: Option<std::time::Instant> = None;
                let mut bar: Option<indicatif::ProgressBar> = None;
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    let done = shm[0].load(Ordering::Relaxed);
                    if shm[1].load(Ordering::SeqCst) == 1 {
                        if let Some(b) = bar {
                            b.finish_and_clear();
                        }
                        iolab_core::sys::exit_now(0);
                    }
                    if done > 0 && moving.is_none() {
                        moving = Some(std::time::Instant::now());
                    }
                    if t0.elapsed().as_secs_f64() < 1.0 {
                        continue;
                    }
                    let b = bar.get_or_insert_with(|| {
                        let (len, tmpl) = match (ops, dur) {
                            (Some(n), _) => (
                                n,
                                "iolab run [{bar:30}] {human_pos}/{human_len} ops of the timed pass, ETA {eta}",
                            ),
                            (None, Some(d)) => (
                                (d * 1000.0) as u64,
                                "iolab run [{bar:30}] {human_pos}/{human_len} ms of the timed pass, ETA {eta}",
                            ),
                            (None, None) => (1, "iolab run {spinner}"),
                        };
                        let b = indicatif::ProgressBar::with_draw_target(
                            Some(len),
                            indicatif::ProgressDrawTarget::stderr(),
                        );
                        if let Ok(st) = indicatif::ProgressStyle::with_template(tmpl) {
                            b.set_style(st.progress_chars("=> "));
                        }
                        b
                    });
                    match (ops, moving) {
                        (Some(n), _) => b.set_position(done.min(n)),
                        (None, Some(m)) => b.set_position(m.elapsed().as_millis() as u64),
                        (None, None) => b.tick(),
                    }
                }
            }
            Ok(pid) => Some(RunBar { pid, shm }),
            Err(_) => None,
        }
    }

    fn stop(self) {
        self.shm[1].store(1, std::sync::atomic::Ordering::SeqCst);
        let _ = iolab_core::sys::waitpid(self.pid);
    }
}

/// One line per finished point.
fn point_line(i: usize, n: usize, label: &str, rec: &serde_json::Value) -> String {
    let f = |r: &serde_json::Value, k: &str| r.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
    match (rec.get("result"), rec.get("error").and_then(|e| e.as_str())) {
        (Some(r), _) if r.get("workload").and_then(|w| w.as_str()) == Some("decimal-lines") => {
            format!(
                "{:>4}/{n}  {label:<50}  {:>10.3} ms open to close (incl. fsync), verified",
                i + 1,
                f(r, "wall_s") * 1e3
            )
        }
        (Some(r), _) if r.get("workload").and_then(|w| w.as_str()) == Some("clock") => format!(
            "{:>4}/{n}  {label:<50}  one clock read {:.1} ns",
            i + 1,
            r["clock"]["overhead_ns"].as_f64().unwrap_or(f64::NAN)
        ),
        (Some(r), _) => format!(
            "{:>4}/{n}  {label:<50}  {:>12.0} ops/s  {:>10.1} MiB/s  {:>10.1} ns/op  p99 {:>9.0} ns",
            i + 1,
            f(r, "iops"),
            f(r, "mib_s"),
            f(r, "ns_per_op"),
            r["latency"]["p99_ns"].as_f64().unwrap_or(f64::NAN)
        ),
        (None, Some(e)) => format!("{:>4}/{n}  {label:<50}  not run: {e}", i + 1),
        _ => String::new(),
    }
}

fn cmd_suite(a: &SuiteArgs) -> Result<i32, Error> {
    if a.list {
        println!("iolab suites (run one with `iolab suite NAME`; --quick for a smoke test):\n");
        for (name, _) in iolab_core::suite::BUILTIN {
            let s = iolab_core::suite::load(name)?;
            println!("  {name:<12} {}", s.about);
            println!("  {:<12} reproduces: {}", "", s.reproduces);
        }
        return Ok(0);
    }
    let name = a.name.as_deref().unwrap_or_default();
    let suite = iolab_core::suite::load(name)?;
    for (flag, d) in [("--disk-dir", &a.disk_dir), ("--tmpfs-dir", &a.tmpfs_dir)] {
        if !d.is_dir() {
            return Err(Error::usage(
                flag,
                format!("{} is not a directory", d.display()),
            ));
        }
    }
    if let Some(c) = &a.csv {
        check_new_path("--csv", c)?;
    }
    iolab_core::cleanup::install_signal_handler();
    let places = iolab_core::suite::Places::make(
        &a.disk_dir,
        &a.tmpfs_dir,
        iolab_core::suite::wants_zram(&suite),
    )?;
    let jobs = iolab_core::suite::jobs(&suite, &places, a.quick)?;
    let points: Vec<Vec<(String, String)>> = jobs.iter().map(|j| j.point.clone()).collect();
    let mut rec = series::Recorder::open(
        a.out.as_deref(),
        a.resume,
        &format!(
            "suite-{}{}",
            suite.name,
            if a.quick { "-quick" } else { "" }
        ),
    )?;
    if rec.dropped > 0 {
        eprintln!(
            "iolab: {}: the last line was cut short ({} bytes); that point runs again",
            rec.path.display(),
            rec.dropped
        );
    }
    let clk = clock::calibrate(20);
    let skipped = points.iter().filter(|p| rec.has(p)).count();
    println!(
        "iolab suite {}{}: {} points; reproduces {}\n{}; records in {}{}",
        suite.name,
        if a.quick {
            " --quick (scaled down: a smoke test, not a measurement)"
        } else {
            ""
        },
        points.len(),
        suite.reproduces,
        places.describe(),
        rec.path.display(),
        if skipped > 0 {
            format!("; {skipped} already recorded, not run again")
        } else {
            String::new()
        }
    );
    let mut progress = Progress::new(&format!("suite {}", suite.name), points.len() - skipped);
    let failed = series::run_jobs(jobs, &mut rec, &clk, &mut |ev| progress.event(&ev))?;
    progress.finish();
    let mine: Vec<serde_json::Value> = points
        .iter()
        .filter_map(|p| rec.done.iter().find(|r| series::is_point(r, p)).cloned())
        .collect();
    print!("{}", iolab_core::suite::render_table(&suite, &mine));
    if let Some(c) = &a.csv {
        let mut keys: Vec<String> = Vec::new();
        for p in &points {
            for (k, _) in p {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
        let mut text = series::csv_header(&keys);
        for r in &mine {
            text += &series::csv_row(r, &keys);
        }
        write_new("--csv", c, text.as_bytes())?;
    }
    println!(
        "\nresult: {} ({} points, {failed} not run this time); charts: iolab report {} -o report.html",
        rec.path.display(),
        points.len(),
        rec.path.display()
    );
    Ok(0)
}

fn cmd_report(a: &ReportArgs) -> Result<i32, Error> {
    check_new_path("--out", &a.out)?;
    let mut recs = Vec::new();
    for p in &a.results {
        let (r, _) = series::read_records(p).map_err(|e| Error::usage("report", e.to_string()))?;
        recs.extend(r);
    }
    let names: Vec<String> = a.results.iter().map(|p| p.display().to_string()).collect();
    let rep = iolab_report::html::build(&recs, &names);
    if let Some(d) = &a.svg {
        std::fs::create_dir_all(d)
            .map_err(|e| Error::Runtime(format!("cannot create --svg {}: {e}", d.display())))?;
        for c in &rep.charts {
            write_new(
                "--svg",
                &d.join(format!("{}.svg", c.name)),
                c.svg.as_bytes(),
            )?;
        }
    }
    write_new("--out", &a.out, rep.html.as_bytes())?;
    println!(
        "report: {} ({} charts from {} records{})",
        a.out.display(),
        rep.charts.len(),
        recs.len(),
        a.svg
            .as_ref()
            .map(|d| format!("; each chart alone in {}", d.display()))
            .unwrap_or_default()
    );
    Ok(0)
}

fn cmd_compare(a: &CompareArgs) -> Result<i32, Error> {
    let limit = match &a.fail_on_regression {
        None => None,
        Some(s) => match s.trim_end_matches('%').parse::<f64>() {
            Ok(v) if v >= 0.0 && v.is_finite() => Some(v),
            _ => {
                return Err(Error::usage(
                    "--fail-on-regression",
                    format!("'{s}' is not a percentage; expected a number such as 5"),
                ))
            }
        },
    };
    let read =
        |p: &Path| series::read_records(p).map_err(|e| Error::usage("compare", e.to_string()));
    let (ra, _) = read(&a.a)?;
    let (rb, _) = read(&a.b)?;
    let figs = ["iops", "ns_per_op", "lat_p99", "cpu_sys"];
    let (rows, only_a, only_b) = series::compare(&ra, &rb, &figs);
    println!(
        "iolab compare: A = {}, B = {}; ratio = B / A (medians); noise = the wider measured spread of the two sides, at least {}%",
        a.a.display(),
        a.b.display(),
        series::MIN_NOISE_PCT
    );
    let mut regressions = 0;
    for r in &rows {
        let verdict = match r.verdict {
            series::Verdict::Faster => "faster",
            series::Verdict::Slower => "slower",
            series::Verdict::WithinNoise => "within noise",
        };
        let ratio = if r.ratio.is_finite() {
            format!("{:>6.3}", r.ratio)
        } else {
            "     -".to_string()
        };
        println!(
            "{:<58} {:<10} A {:>14.1} (n={})  B {:>14.1} (n={})  ratio {ratio}  noise ±{:>4.1}%  {verdict}",
            r.workload, r.figure, r.a.median, r.a.n, r.b.median, r.b.n, r.noise_pct
        );
        if let (Some(l), series::Verdict::Slower) = (limit, &r.verdict) {
            let worse_pct = if r.ratio >= 1.0 {
                (r.ratio - 1.0) * 100.0
            } else {
                (1.0 - r.ratio) * 100.0
            };
            if worse_pct > l {
                regressions += 1;
            }
        }
    }
    for w in &only_a {
        println!("only in A: {w}");
    }
    for w in &only_b {
        println!("only in B: {w}");
    }
    if rows.is_empty() {
        println!("no workload appears in both files");
    }
    if regressions > 0 {
        eprintln!(
            "iolab: compare: {regressions} figure(s) slower in B by more than {}% and beyond the noise",
            limit.unwrap_or(0.0)
        );
        return Ok(3);
    }
    Ok(0)
}

fn cmd_survey(a: &SurveyArgs) -> Result<i32, Error> {
    iolab_core::cleanup::install_signal_handler();
    let mut opts = iolab_core::survey::SurveyOptions::default();
    if let Some(d) = &a.tmp_dir {
        if !d.is_dir() {
            return Err(Error::usage(
                "--tmp-dir",
                format!("{} is not a directory", d.display()),
            ));
        }
        opts.tmp_parent = d.clone();
    }
    if let Some(n) = &a.ops {
        opts.ops = iolab_core::units::parse_count(n).map_err(|m| Error::usage("--ops", m))?;
        if opts.ops == 0 {
            return Err(Error::usage(
                "--ops",
                "0 is not accepted; expected 1 or more operations",
            ));
        }
    }
    if let Some(s) = &a.max_seconds {
        opts.max_s =
            iolab_core::units::parse_duration(s).map_err(|m| Error::usage("--max-seconds", m))?;
        if opts.max_s <= 0.0 {
            return Err(Error::usage(
                "--max-seconds",
                "expected a positive number of seconds",
            ));
        }
    }
    if iolab_core::sys::isatty(2) {
        opts.on_run = Some(Box::new(|i, n, r| {
            eprint!(
                "\r\x1b[2Kiolab survey: {i}/{n} {} {} B -> {}",
                r.method.name(),
                r.bs,
                r.target
            );
            if i == n {
                eprintln!();
            }
        }));
    }
    let clk = clock::calibrate(20);
    let s = iolab_core::survey::survey(&opts, &clk)?;
    std::io::stdout().write_all(&TableExporter.survey(&s)).ok();
    if !a.no_json {
        let stamp = iolab_core::survey::utc_stamp(s.host.started_unix_s);
        let p = iolab_core::survey::write_new_file(
            &a.results_dir,
            "survey",
            &stamp,
            &JsonExporter.survey(&s),
        )?;
        println!("result: {}", p.display());
    }
    Ok(0)
}

fn cmd_probe(a: &ProbeArgs) -> Result<i32, Error> {
    if let Some(j) = &a.json {
        check_json_path(j)?;
    }
    iolab_core::cleanup::install_signal_handler();
    let clk = clock::calibrate(20);
    let shm = Path::new("/dev/shm");
    let tmpfs = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let p = iolab_core::probe::probe(&tmpfs, &std::env::temp_dir(), &clk)?;
    let mut out = String::new();
    out.push_str(&format!(
        "iolab probe: kernel {} | {} | tried in {}\n\n",
        p.host.kernel_release,
        p.host.cpu_model,
        p.dirs
            .iter()
            .map(|(d, f)| format!("{d} ({f})"))
            .collect::<Vec<_>>()
            .join(" and ")
    ));
    let w = p.rows.iter().map(|r| r.name.len()).max().unwrap_or(10);
    for r in &p.rows {
        out.push_str(&format!(
            "{:<w$}  {:<11}  {}\n",
            r.name,
            if r.available {
                "available"
            } else {
                "UNAVAILABLE"
            },
            r.detail
        ));
    }
    if a.json.as_deref() == Some(Path::new("-")) {
        std::io::stderr().write_all(out.as_bytes()).ok();
    } else {
        std::io::stdout().write_all(out.as_bytes()).ok();
    }
    if let Some(j) = &a.json {
        let mut v = serde_json::to_vec_pretty(&p)
            .map_err(|e| Error::Runtime(format!("probe JSON: {e}")))?;
        v.push(b'\n');
        write_json(j, &v)?;
    }
    Ok(0)
}

fn cmd_bench(a: &BenchArgs) -> Result<i32, Error> {
    let ops = iolab_core::units::parse_count(&a.ops).map_err(|m| Error::usage("--ops", m))?;
    let rounds =
        iolab_core::units::parse_count(&a.rounds).map_err(|m| Error::usage("--rounds", m))?;
    if ops == 0 || rounds == 0 {
        return Err(Error::usage(
            if ops == 0 { "--ops" } else { "--rounds" },
            "0 is not accepted",
        ));
    }
    match a.which.as_str() {
        "overhead" => {
            let clk = clock::calibrate(20);
            let r = iolab_core::bench::overhead(ops, rounds as u32, &clk)?;
            print!("{}", iolab_core::bench::render(&r));
        }
        "counters" => {
            let r = iolab_core::bench::counter_overhead(ops, rounds as u32)?;
            print!("{}", iolab_core::bench::render_counters(&r));
        }
        "nop" => {
            let clk = clock::calibrate(20);
            let r = iolab_core::bench::nop(ops, rounds as u32, &clk)?;
            print!("{}", iolab_core::bench::render_nop(&r));
        }
        "offload" => {
            let clk = clock::calibrate(20);
            let r = iolab_core::bench::offload(ops, rounds as u32, &clk)?;
            print!("{}", iolab_core::bench::render_offload(&r));
        }
        other => {
            return Err(Error::usage(
                "bench",
                format!("unknown benchmark '{other}'; accepted: overhead, counters, nop, offload"),
            ))
        }
    }
    Ok(0)
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                std::process::exit(0);
            }
            // One line: clap's first line names the flag and the problem.
            let text = e.render().to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("bad arguments");
            let first = first.trim_start_matches("error: ");
            // "the following required arguments were not provided:" names them on the next line.
            let next = text
                .lines()
                .skip_while(|l| !l.contains(first))
                .nth(1)
                .map(str::trim)
                .filter(|l| first.ends_with(':') && !l.is_empty())
                .unwrap_or_default();
            let first = format!("{first}{}{next}", if next.is_empty() { "" } else { " " });
            let hint = text
                .lines()
                .find(|l| {
                    l.trim_start().starts_with("[possible values")
                        || l.trim_start().starts_with("tip:")
                })
                .map(|l| format!(" ({})", l.trim()))
                .unwrap_or_default();
            eprintln!("iolab: {first}{hint}; see iolab --help");
            std::process::exit(2);
        }
    };
    let r = match &cli.cmd {
        None => cmd_survey(&SurveyArgs {
            results_dir: PathBuf::from("iolab-results"),
            tmp_dir: None,
            ops: None,
            max_seconds: None,
            no_json: false,
        }),
        Some(Cmd::Survey(a)) => cmd_survey(a),
        Some(Cmd::Run(a)) => cmd_run(a),
        Some(Cmd::Bench(a)) => cmd_bench(a),
        Some(Cmd::Probe(a)) => cmd_probe(a),
        Some(Cmd::Sweep(a)) => cmd_sweep(a),
        Some(Cmd::Compare(a)) => cmd_compare(a),
        Some(Cmd::Suite(a)) => cmd_suite(a),
        Some(Cmd::Report(a)) => cmd_report(a),
    };
    match r {
        Ok(code) => std::process::exit(code),
        Err(e) => fail(&e),
    }
}
