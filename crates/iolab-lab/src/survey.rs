//! The main job (`iolab`, `iolab survey`): every method writing 4 B and 4 KiB blocks to /dev/null, to a
//! fresh file in a new temporary directory, and into a pipe read by a peer thread, ranked per target (epoll
//! takes streams only, so it appears in the pipe table; methods that cannot write to a pipe are listed
//! there with the reason). Touches no existing file: the directory is
//! new, each run creates its own file and removes it, and the JSON goes to a new file in ./iolab-results/.

use crate::ranking::{Entry, RankingTable};
pub use crate::survey_run::{Cell, OnRun, Ranked, SurveyRun};
use crate::survey_timing::TableTiming;
use iolab_engine::error::{Error, Result};
use iolab_engine::measure::clock::ClockInfo;
use iolab_engine::method::Fit;
use iolab_engine::result::{Host, SCHEMA_VERSION};
use iolab_engine::spec::{MethodKind, RawSpec};
use iolab_engine::target::TargetKind;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Block sizes the survey compares: the seed thesis's 4-byte and 4 KiB writes.
pub const SURVEY_BS: [u64; 2] = [4, 4096];
/// Ops per method, target and block size, and the time bound that stops a slow method early, both split
/// over the rounds (the whole survey stays under 40 s).
pub const SURVEY_OPS: u64 = 200_000;
pub const SURVEY_MAX_S: f64 = 1.0;
/// Rounds every method runs before the ranking is tested ([`crate::rounds`]): the fewest that can decide
/// an order ([`crate::pairs::MIN_PAIRED`]).
pub const SURVEY_ROUNDS: u32 = 6;
/// Seconds after which the survey starts no further round to decide its undecided orders: about what
/// five rounds of every method took before rounds were added until decided.
pub const SURVEY_MAX_TIME_S: f64 = 30.0;
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
    /// The most rounds any method ran (1 in results of versions before rounds).
    #[serde(default = "one")]
    pub rounds: u32,
    /// How the rounds went: how many, how many disturbed, why they stopped; absent in older results.
    #[serde(default)]
    pub rounds_run: Option<crate::rounds::RoundsRun>,
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
    /// How each table's synchronous methods timed their ops (`--latency-sample`, or iolab's choice where
    /// an op costs less than ten clock reads); absent in older results (every op timed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timing: Vec<TableTiming>,
}

/// The comparing findings over the survey's runs: one table per target, each run a row.
pub fn compare_runs(
    runs: &[SurveyRun],
    ranking: &[RankingTable],
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
            // No finding orders two rows the ranking did not.
            row.not_separated = ranking
                .iter()
                .find(|t| t.target == run.target && t.bs == run.bs)
                .and_then(|t| t.rows.iter().find(|x| x.method == run.method.name()))
                .map(|x| x.tied_with.clone());
            Some(row)
        })
        .collect();
    crate::findings_compare::compare(&mut rows, mem)
}

fn one() -> u32 {
    1
}

pub struct SurveyOptions {
    /// Where to create the temporary directory (default: $TMPDIR or /tmp).
    pub tmp_parent: PathBuf,
    /// Ops per method, target and block size, over all rounds.
    pub ops: u64,
    /// Seconds per method, target and block size, over the first rounds.
    pub max_s: f64,
    /// The first rounds every method runs; ops and max_s are split over them.
    pub rounds: u32,
    /// Seconds after which no further round starts (0: the first rounds only).
    pub max_time_s: f64,
    /// Called after every run (progress).
    pub on_run: Option<OnRun>,
    /// `--latency-sample N` for every synchronous method; None: iolab's choice per table
    /// ([`crate::survey_timing`]).
    pub latency_sample: Option<u64>,
}

impl Default for SurveyOptions {
    fn default() -> Self {
        SurveyOptions {
            tmp_parent: std::env::temp_dir(),
            ops: SURVEY_OPS,
            max_s: SURVEY_MAX_S,
            rounds: SURVEY_ROUNDS,
            max_time_s: SURVEY_MAX_TIME_S,
            on_run: None,
            latency_sample: None,
        }
    }
}

/// Each method on each target it is made for; a refusal by the kernel (psync on a pipe: ESPIPE) is
/// listed, a target the method is not for (epoll on a file) is left out.
/// Each table's synchronous methods time their ops as `timing` says (every op where it names no table).
fn cells(
    dir: &Path,
    (ops, max_s, file_size): (u64, f64, u64),
    timing: &[TableTiming],
) -> Result<Vec<Cell>> {
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
                let every = timing
                    .iter()
                    .find(|t| t.target == target && t.bs == bs)
                    .map_or(1, |t| t.latency_sample);
                let spec = crate::survey_timing::sampled(raw, m, every).resolve()?;
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
    let sizes = (ops, max_s, file_size);
    let timing =
        crate::survey_timing::choose(&cells(dir.path(), sizes, &[])?, opts.latency_sample, clock);
    let cells = cells(dir.path(), sizes, &timing)?;
    let plan = crate::rounds::Plan {
        first: rounds,
        max_time_s: opts.max_time_s,
        write_budget: None,
    };
    let (runs, rounds_run) = crate::rounds::run_rounds(&cells, plan, opts.on_run.as_ref(), clock)?;
    // After every run, never inside one: what memory can copy, and the findings checked against it.
    let memory = iolab_engine::measure::memcopy::measured_within(file_size);
    let ranking = ranking(&runs);
    let findings = compare_runs(&runs, &ranking, &memory);
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
        rounds: rounds_run.rounds,
        rounds_run: Some(rounds_run),
        ranking,
        runs,
        timing,
        peak_rss_bytes: iolab_engine::mem::peak_rss(),
    })
}

/// The ranking of every target and block size of `runs` ([`crate::ranking`]: the median round's time
/// per op, the middle rounds as its interval, ties only between overlapping intervals), targets in the
/// order they ran, each against write().
pub fn ranking(runs: &[SurveyRun]) -> Vec<RankingTable> {
    ranking_against(runs, crate::ranking::BASELINE, "write()")
}

/// The same against `baseline` (a method's name), which the text calls `label`.
pub fn ranking_against(runs: &[SurveyRun], baseline: &str, label: &str) -> Vec<RankingTable> {
    let ranked: Vec<Ranked> = runs.iter().map(SurveyRun::ranked).collect();
    ranking_of(&ranked, baseline, label)
}

/// The ranking of `runs` as the ranking reads them: per target (in the order they ran) and block size
/// (from the smallest), against `baseline`. Linear in the runs: each is put in its table once.
pub fn ranking_of(runs: &[Ranked<'_>], baseline: &str, label: &str) -> Vec<RankingTable> {
    ranking_of_first(runs, baseline, label, usize::MAX).0
}

/// The first `most` tables of [`ranking_of`], and how many it has in all (a page draws a few hundred:
/// ranked all, a forged survey of 127,000 cells took 73 MB for tables it did not draw).
pub fn ranking_of_first(
    runs: &[Ranked<'_>],
    baseline: &str,
    label: &str,
    most: usize,
) -> (Vec<RankingTable>, usize) {
    // Targets in the order they ran, each with its block sizes from the smallest; cells only for the
    // runs that ran (a survey of 207,000 rows that did not, each of its own target, took 76 MB more).
    let mut order: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut cells: std::collections::HashMap<&str, std::collections::BTreeMap<u64, Vec<Entry>>> =
        std::collections::HashMap::new();
    for r in runs {
        let next = order.len();
        order.entry(r.target).or_insert(next);
        if let Some(e) = entry(r) {
            let sizes = cells.entry(r.target).or_default();
            sizes.entry(r.bs).or_default().push(e);
        }
    }
    let mut targets: Vec<_> = cells.into_iter().collect();
    targets.sort_by_key(|(t, _)| order.get(t).copied());
    let all = targets.iter().map(|(_, sizes)| sizes.len()).sum();
    let mut out = Vec::new();
    for (target, sizes) in targets {
        for (bs, entries) in sizes.into_iter().take(most - out.len()) {
            let mut t = crate::ranking::rank_against(&entries, baseline, label);
            (t.target, t.bs) = (target.to_string(), bs);
            out.push(t);
        }
        if out.len() == most {
            break;
        }
    }
    (out, all)
}

/// A run as a row to rank, if it ran: its quiet rounds (in results before rounds were numbered, every
/// round's value numbered in the order they ran, as they were run then).
fn entry(run: &Ranked<'_>) -> Option<Entry> {
    let median = run.median?;
    let rounds: Vec<(u32, f64)> = if !run.round_runs.is_empty() {
        run.round_runs
            .iter()
            .filter(|r| !r.disturbed)
            .map(|r| (r.round, r.ns_per_op))
            .collect()
    } else if run.rounds_ns_per_op.is_empty() {
        vec![(1, median)]
    } else {
        (1..).zip(run.rounds_ns_per_op.iter().copied()).collect()
    };
    let mut e = crate::rounds::entry_of(run.method.name(), rounds, run.method.info().no_data);
    // Every round disturbed: the median is the disturbed rounds', and nothing is decided.
    if e.rounds.is_empty() {
        e.median = median;
        (e.lo, e.hi) = (median, median);
    }
    Some(e)
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
    use crate::pairs::Outcome;
    use crate::rounds::RoundRun;

    /// A row of made-up rounds (numbered from 1), `disturbed` marking some of them.
    fn run(method: MethodKind, rounds: &[f64], disturbed: &[u32]) -> SurveyRun {
        let round_runs: Vec<RoundRun> = (1..)
            .zip(rounds)
            .map(|(round, &ns_per_op)| RoundRun {
                round,
                ns_per_op,
                disturbed: disturbed.contains(&round),
            })
            .collect();
        let mut v: Vec<f64> = round_runs
            .iter()
            .filter(|r| !r.disturbed)
            .map(|r| r.ns_per_op)
            .collect();
        v.sort_by(f64::total_cmp);
        // A real (tiny) result, its ns/op then set to the median of the made-up quiet rounds.
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
            rounds_disturbed: disturbed.len() as u32,
            round_runs,
            steal_s: Some(0.0),
            verdict: None,
        }
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
    fn paired_rounds_rank_disturbed_rounds_stay_out_and_nop_is_the_floor() {
        let runs = vec![
            run(
                MethodKind::Sync,
                &[100.0, 110.0, 105.0, 101.0, 104.0, 103.0],
                &[],
            ),
            run(
                MethodKind::Psync,
                &[101.0, 109.0, 106.0, 100.0, 105.0, 104.0],
                &[],
            ),
            run(
                MethodKind::IoUring,
                &[300.0, 310.0, 290.0, 305.0, 300.0, 299.0, 301.0],
                &[],
            ),
            run(MethodKind::Nop, &[10.0, 11.0, 12.0, 10.0, 11.0, 10.0], &[]),
            run(
                MethodKind::Vectored,
                &[130.0, 125.0, 140.0, 131.0, 128.0, 133.0, 129.0],
                &[],
            ),
            // A disturbed round of stdio (900 ns) is left out; its neighbours ran a 7th round with it.
            run(
                MethodKind::Stdio,
                &[200.0, 205.0, 201.0, 199.0, 900.0, 202.0, 204.0],
                &[5],
            ),
        ];
        let t = &ranking(&runs)[0];
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
        assert!(t.decided, "{:?}", t.pairs);
        let stdio = t.pair("stdio", "io_uring").unwrap();
        assert_eq!(stdio.rounds, 6, "round 5 of stdio was disturbed");
        // Without the 7th round, five paired rounds decide nothing.
        let mut short = runs.clone();
        short[2].round_runs.pop();
        let t = &ranking(&short)[0];
        assert_eq!(
            t.pair("stdio", "io_uring").unwrap().outcome,
            Outcome::Undecided
        );
        assert!(!t.decided);
        assert_eq!(t.rows[1].ratio_to_write, Some(1.0));
        assert_eq!((t.rows[4].median, t.rows[4].hi), (201.0, 204.0));
    }
}
