//! The `iolab` command: argument parsing, printing, progress and exit codes only; everything else is
//! iolab-engine (and iolab-report for the text). One module per command group, `cmd_*.rs`.
//!
//! Exit codes: 0 success; 1 a kernel error at run time (the message names the syscall, errno and a hint),
//! a `--verify` mismatch or a leftover `clean` could not remove; 2 bad input (one line naming the flag and
//! what it accepts, found before anything is created or run; also `compare --fail-on-regression` with no
//! workload in both files); 3 `compare` found a regression beyond `--fail-on-regression`; 130 interrupted.
//! Output that cannot be written
//! (stdout, a --json/--csv/--out file) is a run-time error, exit 1; a stderr that cannot be written is
//! ignored (nothing panics on output: every write goes through output.rs).

mod cmd_bench;
mod cmd_clean;
mod cmd_compare;
#[cfg(feature = "docs")]
mod cmd_docs;
mod cmd_driver;
#[cfg(feature = "fleet")]
mod cmd_fleet;
#[cfg(feature = "vm")]
mod cmd_kernels;
mod cmd_probe;
mod cmd_report;
mod cmd_run;
#[cfg(feature = "fio-jobs")]
mod cmd_run_fio;
mod cmd_series;
mod cmd_survey;
mod cmd_survey_workload;
#[cfg(feature = "vm")]
mod cmd_vm;
#[cfg(any(feature = "vm", feature = "fleet"))]
mod command_line;
#[cfg(feature = "fleet")]
mod fleet_check;
#[cfg(feature = "fleet")]
mod fleet_child;
#[cfg(feature = "fleet")]
mod fleet_groups;
#[cfg(feature = "fleet")]
mod fleet_view;
mod output;
mod progress;
mod run_args;
mod spec_args;
mod survey_args;
#[cfg(feature = "vm")]
mod vm_guest;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use cmd_bench::BenchArgs;
use cmd_clean::CleanArgs;
use cmd_compare::CompareArgs;
#[cfg(feature = "docs")]
use cmd_docs::{CompletionsArgs, ManArgs};
use cmd_driver::DriverArgs;
use cmd_probe::ProbeArgs;
use cmd_report::ReportArgs;
use cmd_series::{SuiteArgs, SweepArgs};
#[cfg(feature = "vm")]
use cmd_vm::VmArgs;
use iolab_engine::error::Error;
use std::path::PathBuf;
use survey_args::SurveyArgs;

/// One line: the man page's NAME and `-h`.
const SHORT_ABOUT: &str = "a Linux I/O methods laboratory: which way of talking to the kernel is fastest, and what it costs";

const ABOUT: &str =
    "iolab: a Linux I/O methods laboratory. For a target and a workload, which way of talking \
to the kernel is fastest, and what does each way cost (CPU, syscalls, faults, context switches)?";

#[cfg(feature = "docs")]
const RUN_EXAMPLES: &str = "Examples (each fits 80 columns; a line ending in \\ goes on below):
  # the Pi thesis's 1M 4-byte writes
  iolab run --method sync --target /dev/null --bs 4 --ops 1M
  iolab run --method io_uring --qd 32 --batch 8 --size 256m \\
      --target /var/tmp/y.dat --verify
  iolab run --method psync --op read --pattern rand --direct --inflight 8 \\
      --target /var/tmp/x.dat --file-size 1g
  iolab run --repeat 5 --method pv2 --rw-flags dontcache \\
      --target /var/tmp/d.dat --size 64m
  # where the CPU time goes
  iolab run --method psync --bs 1m --size 1g --target /var/tmp/p.dat --profile";

/// `iolab survey --help`'s examples, each line within 80 columns.
#[cfg(feature = "docs")]
const SURVEY_EXAMPLES: &str = "Examples:
  # every method on your disk: a directory there, the writes included
  iolab survey --target /var/tmp/iolab-x
  # 4 KiB random reads of an existing file at 1 and 32 requests in flight
  iolab survey --target /data/big.img --workload randread --bs 4k \\
      --inflight 1,32
  # the main job with a Markdown copy of its tables
  iolab survey --md survey.md";

const AFTER: &str = "Without a command, iolab runs `survey`: every method writing 4 B and 4 KiB blocks to /dev/null \
and to a fresh file in a new temporary directory and into a pipe, in rounds until decided (about 30-35 s on a 2-vCPU x86_64 VM with Linux 6.18, idle or loaded): the answer first (the fastest methods against write() per target), \
every table and finding with -v, JSON in ./iolab-results/.
It touches no existing file.

Exit status: 0 ok; 1 kernel error at run time, --verify mismatch, output that cannot be written or a leftover `clean` could not remove; 2 bad input, found before anything is created or run (also compare --fail-on-regression with no workload in both files, or --across host with none on two hosts); 3 compare found a regression (--fail-on-regression); 130 interrupted.";

#[derive(Parser)]
#[command(name = "iolab", version, about = SHORT_ABOUT, long_about = ABOUT, after_help = AFTER)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    /// Run iolab and every thread it starts on these CPUs only ("1", "0,2-3"). Other work is not moved:
    /// choose CPUs it leaves free; a run that still waited for a CPU says so (disturbance)
    #[arg(long, global = true, value_name = "LIST")]
    cpus: Option<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// The main job: every method writing 4 B and 4 KiB blocks to /dev/null and a fresh temporary file.
    // The examples are documentation: a board's build (without `docs`, 3 MiB budget) leaves them out.
    #[cfg_attr(feature = "docs", command(after_long_help = SURVEY_EXAMPLES))]
    Survey(SurveyArgs),
    /// Run one workload, given by flags or a TOML spec file (flags override the file).
    #[cfg_attr(feature = "docs", command(after_long_help = RUN_EXAMPLES))]
    Run(Box<run_args::RunCmd>),
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
    /// Remove what a killed iolab (SIGKILL, SIGQUIT) left: only paths its journal records, still unchanged.
    Clean(CleanArgs),
    /// Shell completions for bash, zsh, fish, elvish or PowerShell, to stdout.
    #[cfg(feature = "docs")]
    Completions(CompletionsArgs),
    /// The man page (to stdout), or every command's page into a directory with --dir.
    #[cfg(feature = "docs")]
    Man(ManArgs),
    /// iolab's sink driver (/dev/iolab_sink): build it against a kernel's headers, load, unload, status.
    Driver(DriverArgs),
    /// Run one iolab command on every host of an Ansible inventory, fetch each host's records and merge
    /// them: `iolab fleet hosts.ini -- survey`.
    #[cfg(feature = "fleet")]
    Fleet(cmd_fleet::FleetArgs),
    /// Run an iolab command inside a guest kernel under QEMU (Debian's kernel, the sink driver loaded, an
    /// NVMe disk with poll queues): `iolab vm -- run ...`. Fetched once into a cache.
    #[cfg(feature = "vm")]
    Vm(VmArgs),
    /// Internal: the offload client's session loop inside the guest of `--offload-partition vm`.
    #[command(hide = true)]
    OffloadGuest,
}

/// glibc malloc, remembering an allocation it refused, so that an abort for want of memory is reported as
/// such (exit 1, files removed; see iolab_engine::fault).
#[global_allocator]
static ALLOC: iolab_engine::mem::Tracked = iolab_engine::mem::Tracked;

/// The command line as parsed and documented: `sweep` takes `run`'s arguments but not `--json` or
/// `--repeat` (it refuses them with the reason), so its help leaves them out.
fn command() -> clap::Command {
    Cli::command().mut_subcommand("sweep", |c| {
        c.mut_arg("json", |a| a.hide(true))
            .mut_arg("repeat", |a| a.hide(true))
    })
}

fn main() {
    iolab_engine::fault::install();
    if iolab_sys::closed_at_start()[1] {
        // Its answer would go to /dev/null: refused before any work, rather than exit 0 with nothing said.
        fail(&Error::usage(
            "stdout",
            "it is closed (>&-): iolab writes its answer there; redirect it to a file or to /dev/null",
        ));
    }
    let cli = match command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(c) => c,
        Err(e) => bad_arguments(e),
    };
    if let Some(list) = &cli.cpus {
        if let Err(e) = iolab_engine::cpus::pin(list) {
            fail(&e);
        }
    }
    let r = match &cli.cmd {
        None => cmd_survey::cmd_survey(&SurveyArgs {
            results_dir: PathBuf::from("iolab-results"),
            ..Default::default()
        }),
        Some(Cmd::Survey(a)) => cmd_survey::cmd_survey(a),
        Some(Cmd::Run(a)) => match &a.fio.fio {
            #[cfg(feature = "fio-jobs")]
            Some(_) => cmd_run_fio::cmd_run_fio(&a.run, &a.fio),
            #[cfg(not(feature = "fio-jobs"))]
            Some(_) => Err(Error::usage(
                "--fio",
                "this iolab is a board's build, without fio job files (3 MiB budget): run the job file \
                 with a host build of iolab",
            )),
            None => cmd_run::cmd_run(&a.run, a.fio.fio_json.as_deref()),
        },
        Some(Cmd::Bench(a)) => cmd_bench::cmd_bench(a),
        Some(Cmd::Probe(a)) => cmd_probe::cmd_probe(a),
        Some(Cmd::Sweep(a)) => cmd_series::cmd_sweep(a),
        Some(Cmd::Compare(a)) => cmd_compare::cmd_compare(a),
        Some(Cmd::Suite(a)) => cmd_series::cmd_suite(a),
        #[cfg(feature = "html")]
        Some(Cmd::Report(a)) => cmd_report::cmd_report(a),
        #[cfg(not(feature = "html"))]
        Some(Cmd::Report(_)) => Err(Error::usage(
            "report",
            "this iolab is a board's build, without the HTML report (3 MiB budget): copy the result \
             files to a host and run `iolab report` there with a host build of iolab",
        )),
        Some(Cmd::Clean(a)) => cmd_clean::cmd_clean(a),
        #[cfg(feature = "docs")]
        Some(Cmd::Completions(a)) => cmd_docs::cmd_completions(a, command()),
        #[cfg(feature = "docs")]
        Some(Cmd::Man(a)) => cmd_docs::cmd_man(a, command()),
        Some(Cmd::Driver(a)) => cmd_driver::cmd_driver(a),
        #[cfg(feature = "vm")]
        Some(Cmd::Vm(a)) => cmd_vm::cmd_vm(a, command()),
        #[cfg(feature = "fleet")]
        Some(Cmd::Fleet(a)) => cmd_fleet::cmd_fleet(a, command()),
        Some(Cmd::OffloadGuest) => iolab_guest::partition::guest::main(),
    };
    match r {
        Ok(code) => std::process::exit(code),
        Err(e) => fail(&e),
    }
}

/// Help and version exit 0; any other clap error is bad input: one line, exit 2.
fn bad_arguments(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        // Help wrapped to the terminal like every other text; help that cannot be written (stdout on a
        // full disk) is an output error: exit 1.
        let code = match output::out(&e.render().to_string()) {
            Ok(()) => 0,
            Err(err) => {
                output::errln(&format!("iolab: {err}"));
                1
            }
        };
        std::process::exit(code);
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
            l.trim_start().starts_with("[possible values") || l.trim_start().starts_with("tip:")
        })
        .map(|l| format!(" ({})", l.trim()))
        .unwrap_or_default();
    output::errln(&clipped(&format!("iolab: {first}{hint}; see iolab --help")));
    std::process::exit(2);
}

fn fail(e: &Error) -> ! {
    output::errln(&clipped(&format!("iolab: {e}")));
    std::process::exit(e.exit_code());
}

/// The most characters a line of an error says: one that quotes its input (a 100 kB `bs` in a spec file)
/// shows the input's ends.
const ERROR_LINE_MAX: usize = 2_000;

/// `text` with each line cut in its middle to [`ERROR_LINE_MAX`] characters.
fn clipped(text: &str) -> String {
    text.lines()
        .map(|l| iolab_engine::units::clip_middle(l, ERROR_LINE_MAX))
        .collect::<Vec<_>>()
        .join("\n")
}
