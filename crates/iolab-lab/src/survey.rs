//! The main job (`iolab`, `iolab survey`): every method writing 4 B and 4 KiB blocks to /dev/null, to a
//! fresh file in a new temporary directory, and into a pipe read by a peer thread, ranked per target (epoll
//! takes streams only, so it appears in the pipe table; methods that cannot write to a pipe are listed
//! there with the reason). Touches no existing file: the directory is
//! new, each run creates its own file and removes it, and the JSON goes to a new file in ./iolab-results/.

use crate::ranking::{Entry, RankingTable};
use iolab_engine::error::{Error, Result};
use iolab_engine::measure::clock::ClockInfo;
use iolab_engine::method::Fit;
use iolab_engine::result::{Host, RunResult, SCHEMA_VERSION};
use iolab_engine::spec::{MethodKind, RawSpec};
use iolab_engine::stats::middle_range;
use iolab_engine::target::TargetKind;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Block sizes the survey compares: the seed thesis's 4-byte and 4 KiB writes.
pub const SURVEY_BS: [u64; 2] = [4, 4096];
/// Ops per method, target and block size, and the time bound that stops a slow method early, both split
/// over the rounds (the whole survey stays under 40 s).
pub const SURVEY_OPS: u64 = 200_000;
pub const SURVEY_MAX_S: f64 = 1.0;
/// Rounds: every method runs once per round, the rounds alternate their order, and the ranking is by the
/// median round with the spread of all of them.
pub const SURVEY_ROUNDS: u32 = 5;
/// The file each file-target run creates (writes wrap around it), where memory and disk allow: small
/// enough that the mmap rows' mapping keeps the main job's peak memory within 16 MiB on a board (the
/// mapping's pages count in its resident set: 8 MiB made it 16.2 MiB with the static x86_64 binary), and
/// still beyond a board's caches (1-2 MiB of L2 on a Pi or a Zynq).
pub const SURVEY_FILE_SIZE: u64 = 4 << 20;

/// The file size for a machine with `mem_available` bytes of memory and `disk_free` bytes free where
/// the files go: [`SURVEY_FILE_SIZE`], or less (down to 1 MiB) so that it takes at most a sixteenth of
/// either.
pub fn file_size_for(mem_available: Option<u64>, disk_free: Option<u64>) -> u64 {
    let cap = |v: Option<u64>| v.map_or(u64::MAX, |b| b / 16);
    let size = SURVEY_FILE_SIZE.min(cap(mem_available)).min(cap(disk_free));
    (size >> 20).max(1) << 20
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SurveyRun {
    /// "/dev/null", "file" or "pipe".
    pub target: String,
    pub method: MethodKind,
    pub bs: u64,
    /// Present when the run happened: the round with the median ns/op.
    pub result: Option<RunResult>,
    /// Why the method could not run on this target (the refusal iolab or the kernel gave).
    pub unavailable: Option<String>,
    /// ns/op of every round, in the order they ran (empty in results of versions before rounds).
    #[serde(default)]
    pub rounds_ns_per_op: Vec<f64>,
    /// Hypervisor steal on all CPUs during this method's rounds, seconds (null where no round's figures
    /// were kept: the method did not run, or a round failed and its row was dropped).
    #[serde(default)]
    pub steal_s: Option<f64>,
    /// What limited its median round ([`crate::verdict`]); absent in older results.
    #[serde(default)]
    pub verdict: Option<crate::verdict::Verdict>,
}

impl SurveyRun {
    /// Did a round fail at run time (no space, an I/O error, a replaced file, data that did not
    /// verify)? A method this machine cannot run, or that cannot do the workload, is not a failure.
    pub fn failed_at_run_time(&self) -> bool {
        self.unavailable
            .as_deref()
            .is_some_and(|u| u.starts_with("failed in round"))
    }
}

/// The survey's JSON document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SurveyResult {
    pub schema_version: u32,
    pub host: Host,
    pub clock: ClockInfo,
    /// Where the file runs happened and on which filesystem.
    pub file_dir: String,
    pub file_fs: String,
    /// Size of each file the file runs created, bytes (64 MiB in results of versions before it).
    #[serde(default = "old_file_size")]
    pub file_size: u64,
    /// Ops of each round's run.
    pub ops_per_run: u64,
    pub max_s_per_run: f64,
    /// Rounds each method ran (1 in results of versions before rounds).
    #[serde(default = "one")]
    pub rounds: u32,
    pub runs: Vec<SurveyRun>,
    /// Findings comparing the runs of each target and block size, then each run's own
    /// (`findings_compare.rs`), checked against `memory`.
    #[serde(default)]
    pub findings: Vec<crate::findings_compare::Compared>,
    /// What this machine's memory can copy, measured once after the runs.
    #[serde(default)]
    pub memory: Option<iolab_engine::measure::memcopy::MemCopy>,
    /// iolab's own peak resident set over the survey (VmHWM), bytes; absent in older results.
    #[serde(default)]
    pub peak_rss_bytes: Option<u64>,
    /// Per target and block size, the methods ranked ([`crate::ranking`]); absent in older results
    /// (see [`SurveyResult::rankings`]).
    #[serde(default)]
    pub ranking: Vec<RankingTable>,
}

/// The comparing findings over the survey's runs: one table per target, each run a row.
pub fn compare_runs(
    runs: &[SurveyRun],
    mem: &iolab_engine::measure::memcopy::MemCopy,
) -> Vec<crate::findings_compare::Compared> {
    let mut rows: Vec<crate::findings_compare::Row> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, run)| {
            let r = run.result.as_ref()?;
            let mut row = crate::findings_compare::Row::of(&run.target, &run.target, r);
            // Each file run has a file of its own: the runs on "file" are one workload.
            row.place = run.target.clone();
            // Its findings cite `runs[i]`'s fields.
            row.source = crate::cite::Source::Run(i);
            row.record = serde_json::to_value(run).ok().map(std::sync::Arc::new);
            Some(row)
        })
        .collect();
    crate::findings_compare::compare(&mut rows, mem)
}

fn one() -> u32 {
    1
}

/// Progress callback: (runs done, runs in all, the cell just run, its round counting from 1).
pub type OnRun = Box<dyn Fn(usize, usize, &Cell, u32)>;

pub struct SurveyOptions {
    /// Where to create the temporary directory (default: $TMPDIR or /tmp).
    pub tmp_parent: PathBuf,
    /// Ops per method, target and block size, over all rounds.
    pub ops: u64,
    /// Seconds per method, target and block size, over all rounds.
    pub max_s: f64,
    pub rounds: u32,
    /// Called after every run (progress).
    pub on_run: Option<OnRun>,
}

impl Default for SurveyOptions {
    fn default() -> Self {
        SurveyOptions {
            tmp_parent: std::env::temp_dir(),
            ops: SURVEY_OPS,
            max_s: SURVEY_MAX_S,
            rounds: SURVEY_ROUNDS,
            on_run: None,
        }
    }
}

/// One method on one target at one block size: what each round runs.
pub struct Cell {
    /// "/dev/null", "file", "pipe", or a workload's label.
    pub target: String,
    pub method: MethodKind,
    pub bs: u64,
    pub(crate) spec: iolab_engine::spec::Spec,
}

/// Each method on each target it is made for; a refusal by the kernel (psync on a pipe: ESPIPE) is
/// listed, a target the method is not for (epoll on a file) is left out.
fn cells(dir: &Path, ops: u64, max_s: f64, file_size: u64) -> Result<Vec<Cell>> {
    let mut cells = Vec::new();
    for target in ["/dev/null", "file", "pipe"] {
        let kind = match target {
            "pipe" => TargetKind::Pipe,
            "file" => TargetKind::File,
            _ => TargetKind::DevNull,
        };
        for bs in SURVEY_BS {
            for m in MethodKind::all() {
                if matches!(
                    m.info().targets.fit(kind),
                    Fit::Never(_) | Fit::OtherTarget(_)
                ) {
                    continue;
                }
                let path = match target {
                    "file" => dir.join(format!("{}-{bs}.dat", m.name())),
                    t => PathBuf::from(t),
                };
                let mut raw = RawSpec::new()
                    .with("target", path.display().to_string())
                    .with("method", m.name())
                    .with("bs", bs)
                    .with("ops", ops)
                    .with("duration", max_s)
                    // No tracepoints: releasing one waits for RCU grace periods (0.1-1 s each on this VM,
                    // measured), which would break the survey's time budget. Software counters stay on.
                    .with("count", "none");
                if target == "file" {
                    raw = raw.with("file-size", file_size);
                }
                let spec = raw.resolve()?;
                cells.push(Cell {
                    target: target.to_string(),
                    method: m,
                    bs,
                    spec,
                });
            }
        }
    }
    Ok(cells)
}

fn old_file_size() -> u64 {
    64 << 20
}

pub fn survey(opts: &SurveyOptions, clock: &ClockInfo) -> Result<SurveyResult> {
    // Removed at exit and on Ctrl-C (only while it is still the directory iolab made), journaled for
    // `iolab clean`.
    let dir = iolab_engine::cleanup::Created::temp_dir(&opts.tmp_parent, "iolab-survey-").map_err(
        |e| {
            Error::usage(
                "--tmp-dir",
                format!(
                    "cannot create a directory in {}: {e}",
                    opts.tmp_parent.display()
                ),
            )
        },
    )?;
    // Every helper file of its runs (a splice source for /dev/null) goes there too.
    iolab_engine::paths::set_scratch_dir(dir.path());
    let fs = iolab_sys::fs_type_name(dir.path()).unwrap_or("unknown filesystem");
    let rounds = opts.rounds.max(1);
    let ops = (opts.ops / rounds as u64).max(1);
    let max_s = opts.max_s / rounds as f64;
    let file_size = file_size_for(
        iolab_engine::mem::meminfo("MemAvailable"),
        iolab_sys::fs_free_bytes(dir.path()).ok(),
    );
    let cells = cells(dir.path(), ops, max_s, file_size)?;
    let runs = run_rounds(&cells, rounds, opts.on_run.as_ref(), clock)?;
    // After every run, never inside one: what memory can copy, and the findings checked against it.
    let memory = iolab_engine::measure::memcopy::measured_within(file_size);
    let findings = compare_runs(&runs, &memory);
    Ok(SurveyResult {
        findings,
        memory: Some(memory),
        schema_version: SCHEMA_VERSION,
        host: Host::current(),
        clock: clock.clone(),
        file_dir: opts.tmp_parent.display().to_string(),
        file_fs: fs.to_string(),
        file_size,
        ops_per_run: ops,
        max_s_per_run: max_s,
        rounds,
        ranking: ranking(&runs),
        runs,
        peak_rss_bytes: iolab_engine::mem::peak_rss(),
    })
}

/// Every cell once per round, forwards in even rounds and backwards in odd ones (a slow drift in the
/// machine's load then touches every method alike); a cell refused in the first round is not run again.
pub(crate) fn run_rounds(
    cells: &[Cell],
    rounds: u32,
    on_run: Option<&OnRun>,
    clock: &ClockInfo,
) -> Result<Vec<SurveyRun>> {
    // Room for exactly the rounds: a result is 3 KiB, and vectors left to double would hold 8 for 5.
    let mut results: Vec<Vec<RunResult>> = cells
        .iter()
        .map(|_| Vec::with_capacity(rounds as usize))
        .collect();
    let mut refused: Vec<Option<String>> = cells.iter().map(|_| None).collect();
    let total = cells.len() * rounds as usize;
    let mut done = 0;
    for round in 0..rounds {
        let order: Vec<usize> = if round % 2 == 0 {
            (0..cells.len()).collect()
        } else {
            (0..cells.len()).rev().collect()
        };
        for i in order {
            done += 1;
            if refused[i].is_some() {
                continue;
            }
            match crate::run::run(&cells[i].spec, clock) {
                Ok(r) => results[i].push(r),
                Err(e) => {
                    refused[i] = Some(why_not(e, round + 1, rounds)?);
                    results[i].clear();
                }
            }
            if let Some(f) = on_run {
                f(done, total, &cells[i], round + 1);
            }
        }
    }
    Ok(cells
        .iter()
        .zip(results)
        .zip(refused)
        .map(|((c, rs), why)| median_run(c, rs, why))
        .collect())
}

/// What a cell's row says when a round of it ended in an error: the refusal (bad input, a kernel error,
/// a method not available here) as it came, or the run-time failure with its round (an offload client that
/// never reported ready on a loaded machine, a short transfer, data that did not verify). The row's other
/// rounds are dropped, since a median of the rounds that happened to work would hide the failure; the other
/// rows are still measured. Only an error writing output ends the survey.
fn why_not(e: Error, round: u32, rounds: u32) -> Result<String> {
    match e {
        Error::Output(_) => Err(e),
        Error::Runtime(_) | Error::Verify(_) => {
            Ok(format!("failed in round {round} of {rounds}: {e}"))
        }
        Error::Usage { .. } | Error::Sys(_) | Error::Unavailable(_) => Ok(e.to_string()),
    }
}

/// A cell's entry: the round with the median ns/op as its result, every round's ns/op, the steal.
fn median_run(c: &Cell, mut rs: Vec<RunResult>, why: Option<String>) -> SurveyRun {
    let rounds_ns_per_op: Vec<f64> = rs.iter().map(|r| r.ns_per_op).collect();
    let steal_s = (!rs.is_empty()).then(|| rs.iter().map(|r| r.cpu.steal_all_cpus_s).sum());
    rs.sort_by(|a, b| a.ns_per_op.total_cmp(&b.ns_per_op));
    let mid = rs.len().saturating_sub(1) / 2;
    let result = (why.is_none() && !rs.is_empty()).then(|| rs.swap_remove(mid));
    SurveyRun {
        target: c.target.clone(),
        method: c.method,
        bs: c.bs,
        verdict: result.as_ref().map(crate::verdict::of),
        result,
        unavailable: why,
        rounds_ns_per_op,
        steal_s,
    }
}

/// The ranking of every target and block size of `runs` ([`crate::ranking`]: the median round's time
/// per op, the middle rounds as its interval, ties only between overlapping intervals), targets in the
/// order they ran, each against write().
pub fn ranking(runs: &[SurveyRun]) -> Vec<RankingTable> {
    ranking_against(runs, crate::ranking::BASELINE, "write()")
}

/// The same against `baseline` (a method's name), which the text calls `label`.
pub fn ranking_against(runs: &[SurveyRun], baseline: &str, label: &str) -> Vec<RankingTable> {
    // Targets in the order they ran, each with its block sizes from the smallest.
    let mut targets: Vec<&str> = Vec::new();
    for r in runs {
        if !targets.contains(&r.target.as_str()) {
            targets.push(&r.target);
        }
    }
    let mut tables: Vec<(&str, u64)> = Vec::new();
    for t in targets {
        let mut sizes: Vec<u64> = runs
            .iter()
            .filter(|r| r.target == t)
            .map(|r| r.bs)
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        tables.extend(sizes.into_iter().map(|bs| (t, bs)));
    }
    let mut out = Vec::new();
    for (target, bs) in tables {
        let entries: Vec<Entry> = runs
            .iter()
            .filter(|r| r.target == target && r.bs == bs)
            .filter_map(entry)
            .collect();
        if !entries.is_empty() {
            out.push(RankingTable {
                target: target.to_string(),
                bs,
                unit: "ns/op".into(),
                rows: crate::ranking::rank_against(&entries, baseline),
                baseline: baseline.into(),
                baseline_label: label.into(),
            });
        }
    }
    out
}

/// A run as a row to rank, if it ran.
fn entry(run: &SurveyRun) -> Option<Entry> {
    let median = run.result.as_ref()?.ns_per_op;
    let v = if run.rounds_ns_per_op.is_empty() {
        vec![median]
    } else {
        run.rounds_ns_per_op.clone()
    };
    let (lo, hi) = middle_range(v);
    Some(Entry {
        method: run.method.name().to_string(),
        median,
        lo,
        hi,
        floor: run.method.info().no_data,
    })
}

impl SurveyResult {
    /// Its ranking: as recorded, or (a result of a version before it) computed from its runs.
    pub fn rankings(&self) -> Vec<RankingTable> {
        if self.ranking.is_empty() {
            ranking(&self.runs)
        } else {
            self.ranking.clone()
        }
    }

    /// The run of `method` on `target` with `bs`.
    pub fn run_of(&self, target: &str, bs: u64, method: &str) -> Option<&SurveyRun> {
        self.runs
            .iter()
            .find(|r| r.target == target && r.bs == bs && r.method.name() == method)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(method: MethodKind, rounds: &[f64]) -> SurveyRun {
        let mut v = rounds.to_vec();
        v.sort_by(f64::total_cmp);
        // A real (tiny) result, its ns/op then set to the median of the made-up rounds.
        let clock = iolab_engine::measure::clock::calibrate(1);
        let spec = RawSpec::new()
            .with("method", "nop")
            .with("ops", 10u64)
            .resolve()
            .unwrap();
        let mut result = crate::run::run(&spec, &clock).unwrap();
        result.ns_per_op = v[(v.len() - 1) / 2];
        SurveyRun {
            target: "/dev/null".into(),
            method,
            bs: 4,
            result: Some(result),
            unavailable: None,
            rounds_ns_per_op: rounds.to_vec(),
            steal_s: Some(0.0),
            verdict: None,
        }
    }

    #[test]
    fn a_failed_round_marks_its_row_and_only_output_errors_end_the_survey() {
        let m = why_not(
            Error::Runtime("the offload client did not report ready".into()),
            3,
            5,
        );
        assert_eq!(
            m.unwrap(),
            "failed in round 3 of 5: the offload client did not report ready"
        );
        let m = why_not(Error::Verify("block 7 differs".into()), 1, 5).unwrap();
        assert_eq!(m, "failed in round 1 of 5: verify: block 7 differs");
        let m = why_not(Error::usage("--method", "not on a pipe"), 1, 5).unwrap();
        assert_eq!(m, "--method: not on a pipe");
        assert!(why_not(Error::Output("stdout: EPIPE".into()), 2, 5).is_err());
    }

    #[test]
    fn the_file_shrinks_to_free_memory_and_disk() {
        assert_eq!(file_size_for(None, None), 4 << 20);
        assert_eq!(file_size_for(Some(16 << 30), Some(100 << 30)), 4 << 20);
        // A board with 48 MiB available: 3 MiB; an almost full card (20 MiB free): 1 MiB.
        assert_eq!(file_size_for(Some(48 << 20), None), 3 << 20);
        assert_eq!(file_size_for(Some(1 << 30), Some(20 << 20)), 1 << 20);
    }

    #[test]
    fn overlapping_rounds_are_tied_and_nop_is_the_floor() {
        let s = SurveyResult {
            schema_version: SCHEMA_VERSION,
            host: Host::current(),
            clock: iolab_engine::measure::clock::calibrate(1),
            file_dir: String::new(),
            file_fs: String::new(),
            file_size: SURVEY_FILE_SIZE,
            ops_per_run: 1,
            max_s_per_run: 1.0,
            rounds: 3,
            findings: Vec::new(),
            memory: None,
            peak_rss_bytes: None,
            ranking: Vec::new(),
            runs: vec![
                run(MethodKind::Sync, &[100.0, 110.0, 105.0]),
                run(MethodKind::Psync, &[108.0, 120.0, 112.0]),
                run(MethodKind::IoUring, &[300.0, 310.0, 290.0]),
                run(MethodKind::Nop, &[10.0, 11.0, 12.0]),
                run(MethodKind::Vectored, &[130.0, 125.0, 140.0]),
                // One disturbed round of five does not tie it with io_uring.
                run(MethodKind::Stdio, &[200.0, 205.0, 201.0, 199.0, 900.0]),
            ],
        };
        let t = &s.rankings()[0];
        let got: Vec<(&str, &str)> = t
            .rows
            .iter()
            .map(|x| (x.method.as_str(), x.rank.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("nop", "floor"),
                ("sync", "1="),
                ("psync", "1="),
                ("vectored", "3"),
                ("stdio", "4"),
                ("io_uring", "5"),
            ]
        );
        assert_eq!((t.rows[2].lo, t.rows[2].hi), (108.0, 120.0));
        assert_eq!(t.rows[1].ratio_to_write, Some(1.0));
    }
}
