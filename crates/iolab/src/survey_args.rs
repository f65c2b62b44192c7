//! The flags of `iolab survey` (the main job, and `--target` for the user's own device and workload).

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Default)]
pub(crate) struct SurveyArgs {
    // In the order a user sets them: what to measure, how long, then where the results go.
    /// Your own device and workload: a directory (in a new temporary directory there the reads share a
    /// file laid out once, each write run makes its own), a regular file (read, never written unless --overwrite) or a block device (read,
    /// written only with --allow-device-writes). Every method runs each workload at the same requests in
    /// flight [default max seconds: 0.6]
    #[arg(long, value_name = "PATH")]
    pub(crate) target: Option<PathBuf>,
    /// With --target: read, write, randread, randwrite, rw or randrw (reads and writes, half each), a comma
    /// list [default: read and randread, and the writes too in a directory]
    #[arg(long, value_name = "LIST", requires = "target")]
    pub(crate) workload: Option<String>,
    /// With --target: block sizes, a comma list [default: 1 MiB sequential, 4 KiB random]
    #[arg(long, value_name = "LIST", requires = "target")]
    pub(crate) bs: Option<String>,
    /// With --target: requests in flight, a comma list (a synchronous method runs that many threads, a
    /// queued one that depth) [default: 8,1 sequential, 32,1 random]
    #[arg(long, value_name = "LIST", requires = "target")]
    pub(crate) inflight: Option<String>,
    /// With --target: O_DIRECT only [default: O_DIRECT and buffered]
    #[arg(long, requires = "target", conflicts_with = "buffered")]
    pub(crate) direct: bool,
    /// With --target: buffered only
    #[arg(long, requires = "target")]
    pub(crate) buffered: bool,
    /// With --target a directory: size of each file a run makes [default: 64 MiB, at most a sixteenth of
    /// free memory and disk]
    #[arg(long, value_name = "SIZE", requires = "target")]
    pub(crate) file_size: Option<String>,
    /// With --target a regular file: let the write workloads replace its contents
    #[arg(long, requires = "target")]
    pub(crate) overwrite: bool,
    /// With --target a block device: let the write workloads write to it (destroys what is on it)
    #[arg(long, requires = "target")]
    pub(crate) allow_device_writes: bool,
    /// Ops per method, target and block size, split over the first rounds (each round's run also stops
    /// after its share of --max-seconds; with --target a run that writes writes its file once over at most,
    /// --file-size, or 64 MiB on a file or device) [default: 200000].
    #[arg(long, value_name = "N")]
    pub(crate) ops: Option<String>,
    /// Time bound per method, target and block size in seconds, split over the first rounds [default: 1].
    #[arg(long, value_name = "SECS")]
    pub(crate) max_seconds: Option<String>,
    /// The first rounds: every method runs once per round, in a fresh random order; then only the methods
    /// whose order is not yet decided run more rounds, until it is or --max-time is spent. Ranked by the
    /// median quiet round; 6 rounds are the fewest that can decide an order [default: 6].
    #[arg(long, value_name = "N")]
    pub(crate) rounds: Option<String>,
    /// Seconds after which no further round starts (the first --rounds always run); 0 runs the first
    /// rounds only [default: 30; with --target 60].
    #[arg(long, value_name = "SECS")]
    pub(crate) max_time: Option<String>,
    /// Time one op in N of each synchronous method on its own (0: none), its time per op from each run's
    /// span [default: 64 in a table whose cheapest op costs less than ten clock reads, else every op; with
    /// --target every op].
    #[arg(long, value_name = "N")]
    pub(crate) latency_sample: Option<String>,
    /// Where to create the temporary directory for the file runs [default: $TMPDIR or /tmp].
    #[arg(long, value_name = "DIR")]
    pub(crate) tmp_dir: Option<PathBuf>,
    /// Directory for the JSON result (created if missing; a new file is always made).
    #[arg(long, value_name = "DIR", default_value = "iolab-results")]
    pub(crate) results_dir: PathBuf,
    /// Do not write the JSON result.
    #[arg(long)]
    pub(crate) no_json: bool,
    /// Write the tables as Markdown to FILE. An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) md: Option<PathBuf>,
    /// After the answer, every table (the middle rounds, CPU, syscalls per op) and every finding.
    #[arg(short, long)]
    pub(crate) verbose: bool,
}
