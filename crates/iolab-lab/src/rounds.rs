//! Rounds until the ranking is decided. Every cell (a method on a target at a block size) runs once per
//! round, in a fresh random order each round. After the first rounds (`--rounds`, at least
//! [`crate::pairs::MIN_PAIRED`] before anything can be decided) the rows of each table are tested in
//! pairs ([`crate::pairs`]), and only the cells of rows next to each other whose order is undecided run
//! further rounds, tested again at the counts in [`crate::pairs::LOOKS`], until every such pair is
//! separated or tied, or the time budget (`--max-time`) is spent. A run the machine disturbed
//! ([`iolab_engine::disturbance`]) is kept out of the tests and counted; its cell runs again in a later
//! round, within the budget.

use crate::ranking::Entry;
pub use crate::survey_run::RoundRun;
use crate::survey_run::{Cell, OnRun, SurveyRun};
use iolab_engine::error::{Error, Result};
use iolab_engine::measure::clock::ClockInfo;
use iolab_engine::result::RunResult;
use iolab_engine::stats::middle_range;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// No survey runs more rounds than this, whatever its budget.
pub const MAX_ROUNDS: u32 = 64;
/// Results kept per cell (each round's time is kept apart, so the median is always exact): beyond this,
/// the one furthest from the median so far is dropped, and the row's result is the kept round nearest
/// the median (the median round itself while a cell has run no more rounds than this, as with the
/// default budget).
const KEEP: usize = 15;

/// How many rounds to run.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Rounds every cell runs (`--rounds`).
    pub first: u32,
    /// Seconds from the start after which no further round begins (`--max-time`); the first rounds
    /// always run.
    pub max_time_s: f64,
    /// The most bytes the runs that write may write in all (`survey --target`: what its plan said):
    /// a run of a further round starts only while the bytes written so far and the most it writes
    /// (its ops times its block size) stay within it. None: no bound.
    pub write_budget: Option<u64>,
}

/// The most a run of `c` writes: its ops times its block size (none for a cell that only reads).
pub(crate) fn most_written(c: &Cell) -> u64 {
    match c.spec.op.writes() {
        true => c.spec.ops.map_or(u64::MAX, |n| n.saturating_mul(c.bs)),
        false => 0,
    }
}

/// The cells of `todo` a further round runs within `budget` bytes of writes, `written` already written:
/// in order, each reserving the most it writes.
fn within_budget(cells: &[Cell], todo: &[usize], budget: Option<u64>, written: u64) -> Vec<usize> {
    let Some(budget) = budget else {
        return todo.to_vec();
    };
    let mut reserved = written;
    todo.iter()
        .copied()
        .filter(|&i| {
            let need = most_written(&cells[i]);
            let fits = reserved.saturating_add(need) <= budget;
            if fits {
                reserved = reserved.saturating_add(need);
            }
            fits
        })
        .collect()
}

/// How the rounds went, in a survey's JSON (`rounds_run`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoundsRun {
    /// `--rounds`, and the budget in seconds.
    pub first: u32,
    pub max_time_s: f64,
    /// The last round any cell ran.
    pub rounds: u32,
    /// Runs in all, and how many of them the machine disturbed.
    pub runs: u32,
    pub disturbed: u32,
    /// "decided" (every pair of rows next to each other separated or tied), "budget" (the time ran out
    /// first), "writes" (the runs left would write past the bytes the plan said), "rounds"
    /// ([`MAX_ROUNDS`] reached) or "first rounds only" (a budget of 0).
    pub stopped: String,
    /// Seconds the rounds took.
    pub elapsed_s: f64,
    /// The seed of the rounds' random orders.
    pub order_seed: u64,
    /// Everything but iolab kept this share of all CPUs busy during the runs (their wall time's
    /// weighted mean); null where /proc/stat was not read.
    pub others_busy_share: Option<f64>,
}

/// What each cell has measured so far.
#[derive(Default)]
struct Kept {
    rounds: Vec<RoundRun>,
    quiet: Vec<RunResult>,
    disturbed: Vec<RunResult>,
    refused: Option<String>,
    /// Steal on all CPUs over every round, seconds.
    steal_s: f64,
    /// The time per layer of the first round's traced pass (`--layers` traces the first round only).
    layers: Option<iolab_engine::measure::workload_figures::LayerFigures>,
    /// Why that pass gave none, if it did not (its run's note).
    layers_note: Option<String>,
}

impl Kept {
    fn push(&mut self, round: u32, mut r: RunResult) {
        if let Some(l) = r.layers.take() {
            self.layers = Some(l);
        }
        if let Some(n) = r.notes.iter().find(|n| n.starts_with(NO_LAYERS)) {
            self.layers_note = Some(n.clone());
        }
        let disturbed = r.disturbance.as_ref().is_some_and(|d| d.disturbed());
        self.steal_s += r.cpu.steal_all_cpus_s;
        self.rounds.push(RoundRun {
            round,
            ns_per_op: r.ns_per_op,
            disturbed,
        });
        let median = self.median(disturbed);
        let keep = if disturbed {
            &mut self.disturbed
        } else {
            &mut self.quiet
        };
        keep.push(r);
        if keep.len() > KEEP {
            let far = (0..keep.len()).max_by(|&a, &b| {
                let d = |i: usize| (keep[i].ns_per_op - median).abs();
                d(a).total_cmp(&d(b))
            });
            if let Some(i) = far {
                keep.swap_remove(i);
            }
        }
    }

    /// The median (the lower of the middle two) ns/op of the quiet rounds, or of the disturbed ones.
    fn median(&self, disturbed: bool) -> f64 {
        let mut v: Vec<f64> = self
            .rounds
            .iter()
            .filter(|r| r.disturbed == disturbed)
            .map(|r| r.ns_per_op)
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or(f64::NAN)
    }

    /// The quiet rounds as (round, ns/op).
    fn quiet_rounds(&self) -> Vec<(u32, f64)> {
        self.rounds
            .iter()
            .filter(|r| !r.disturbed)
            .map(|r| (r.round, r.ns_per_op))
            .collect()
    }
}

/// Runs `cells` in rounds by `plan`.
pub(crate) fn run_rounds(
    cells: &[Cell],
    plan: Plan,
    on_run: Option<&OnRun>,
    clock: &ClockInfo,
) -> Result<(Vec<SurveyRun>, RoundsRun)> {
    let start = Instant::now();
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let seed = iolab_engine::pattern::mix64(since_epoch ^ u64::from(std::process::id()));
    let mut kept: Vec<Kept> = cells.iter().map(|_| Kept::default()).collect();
    let first = plan.first.max(1);
    let mut todo: Vec<usize> = (0..cells.len()).collect();
    let mut total = cells.len() * first as usize;
    let (mut done, mut round, mut busy) = (0, 0u32, Busy::default());
    let mut written = 0u64;
    let stopped = loop {
        if round >= first {
            if plan.max_time_s <= 0.0 {
                break "first rounds only";
            }
            if is_look(round) {
                todo = undecided(cells, &kept);
            }
            if todo.is_empty() {
                break "decided";
            }
            todo = within_budget(cells, &todo, plan.write_budget, written);
            if todo.is_empty() {
                break "writes";
            }
            if start.elapsed().as_secs_f64() >= plan.max_time_s {
                break "budget";
            }
            if round >= MAX_ROUNDS {
                break "rounds";
            }
            total += todo.len();
        }
        round += 1;
        for i in shuffled(&todo, seed, round) {
            done += 1;
            if kept[i].refused.is_some() {
                continue;
            }
            let spec = spec_of(&cells[i], round);
            // A traced pass (`--layers`, the first round) writes before the timed one, at most as much:
            // its bytes are in no result, so the most it could.
            if spec.layers {
                written = written.saturating_add(most_written(&cells[i]));
            }
            match crate::run::run(&spec, clock) {
                Ok(r) => {
                    if most_written(&cells[i]) > 0 {
                        written = written.saturating_add(r.bytes);
                    }
                    busy.add(&r);
                    kept[i].push(round, r);
                }
                Err(e) => {
                    // What a failed run wrote is not known: the most it could.
                    written = written.saturating_add(most_written(&cells[i]));
                    kept[i].refused = Some(why_not(e, round)?)
                }
            }
            if let Some(f) = on_run {
                f(done, total, &cells[i], round);
            }
        }
    };
    let all: Vec<&RoundRun> = kept.iter().flat_map(|k| &k.rounds).collect();
    let info = RoundsRun {
        first,
        max_time_s: plan.max_time_s,
        rounds: round,
        runs: all.len() as u32,
        disturbed: all.iter().filter(|r| r.disturbed).count() as u32,
        stopped: stopped.into(),
        elapsed_s: start.elapsed().as_secs_f64(),
        order_seed: seed,
        others_busy_share: busy.share(),
    };
    let runs = cells
        .iter()
        .zip(kept)
        .map(|(c, k)| median_run(c, k))
        .collect();
    Ok((runs, info))
}

/// How a run's note says it has no time per layer.
const NO_LAYERS: &str = "no time per layer";

/// The spec of `c`'s run in `round`: its block layer traced in the first round only (a traced pass
/// doubles a run's I/O, and where an op's time goes does not need a median).
fn spec_of(c: &Cell, round: u32) -> std::borrow::Cow<'_, iolab_engine::spec::Spec> {
    if round > 1 && c.spec.layers {
        let mut s = c.spec.clone();
        s.layers = false;
        std::borrow::Cow::Owned(s)
    } else {
        std::borrow::Cow::Borrowed(&c.spec)
    }
}

/// The others' CPU share over the runs, weighted by each run's wall time.
#[derive(Default)]
struct Busy {
    sum: f64,
    wall: f64,
}

impl Busy {
    fn add(&mut self, r: &RunResult) {
        // Every CPU of the machine, whatever --cpus left iolab.
        let cpus = r
            .cpu
            .system_wide
            .as_ref()
            .map_or(0, |s| s.kernel_share.len())
            .max(r.host.cpus_online)
            .max(1) as f64;
        if let Some(b) = r
            .disturbance
            .as_ref()
            .and_then(|d| d.others_cpus)
            .map(|o| o / cpus)
        {
            self.sum += b * r.wall_s;
            self.wall += r.wall_s;
        }
    }

    fn share(&self) -> Option<f64> {
        (self.wall > 0.0).then(|| self.sum / self.wall)
    }
}

/// Whether the pairs are tested after `round` rounds.
fn is_look(round: u32) -> bool {
    let last = crate::pairs::LOOKS[crate::pairs::LOOKS.len() - 1];
    crate::pairs::LOOKS.contains(&round) || (round > last && round.is_multiple_of(16))
}

/// `todo` in the round's random order (Fisher-Yates, SplitMix64 from the seed and the round).
fn shuffled(todo: &[usize], seed: u64, round: u32) -> Vec<usize> {
    let mut v = todo.to_vec();
    let mut x = seed ^ (u64::from(round) << 32);
    for i in (1..v.len()).rev() {
        x = iolab_engine::pattern::mix64(x);
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
}

/// The cells of rows next to each other in a table (a target and block size) whose order the quiet
/// rounds have not decided.
fn undecided(cells: &[Cell], kept: &[Kept]) -> Vec<usize> {
    let mut tables: Vec<(&str, u64)> = cells.iter().map(|c| (c.target.as_str(), c.bs)).collect();
    tables.dedup();
    let mut out = Vec::new();
    for (target, bs) in tables {
        let mine: Vec<usize> = (0..cells.len())
            .filter(|&i| cells[i].target == target && cells[i].bs == bs)
            .filter(|&i| kept[i].refused.is_none() && !cells[i].method.info().no_data)
            .collect();
        let entries: Vec<Entry> = mine
            .iter()
            .map(|&i| entry_of(cells[i].method.name(), kept[i].quiet_rounds(), false))
            .collect();
        let t = crate::ranking::rank(&entries);
        let rows: Vec<&str> = t.ranked().map(|r| r.method.as_str()).collect();
        for w in rows.windows(2) {
            if t.pair(w[0], w[1])
                .is_none_or(|p| p.outcome == crate::pairs::Outcome::Undecided)
            {
                let at = |m: &str| mine.iter().copied().find(|&i| cells[i].method.name() == m);
                out.extend(at(w[0]).into_iter().chain(at(w[1])));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// A row to rank from its rounds (round, ns/op): their median, the middle rounds, the rounds.
pub(crate) fn entry_of(method: &str, rounds: Vec<(u32, f64)>, floor: bool) -> Entry {
    let v: Vec<f64> = rounds.iter().map(|r| r.1).collect();
    let mut sorted = v.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted
        .get(sorted.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(f64::NAN);
    let (lo, hi) = if v.is_empty() {
        (median, median)
    } else {
        middle_range(v)
    };
    Entry {
        method: method.into(),
        median,
        lo,
        hi,
        rounds,
        floor,
    }
}

/// What a cell's row says when a round of it ended in an error: the refusal (bad input, a kernel error,
/// a method not available here) as it came, or the run-time failure with its round (an offload client that
/// never reported ready on a loaded machine, a short transfer, data that did not verify). The row's other
/// rounds are dropped, since a median of the rounds that happened to work would hide the failure; the other
/// rows are still measured. Only an error writing output ends the survey.
pub(crate) fn why_not(e: Error, round: u32) -> Result<String> {
    match e {
        Error::Output(_) => Err(e),
        Error::Runtime(_) | Error::Verify(_) => Ok(format!("failed in round {round}: {e}")),
        Error::Sys(ref f) if FAILURES.contains(&f.err.errno) => {
            Ok(format!("failed in round {round}: {e}"))
        }
        Error::Usage { .. } | Error::Sys(_) | Error::Unavailable(_) => Ok(e.to_string()),
    }
}

/// Kernel errors of a run that went wrong where it should have worked (the storage's doing, not the
/// method's or the machine's settings): no space, an I/O error, a quota, a file grown past its limit, a
/// file handle gone stale.
const FAILURES: [i32; 5] = [
    libc::ENOSPC,
    libc::EIO,
    libc::EDQUOT,
    libc::EFBIG,
    libc::ESTALE,
];

/// A cell's entry: the kept round nearest the median ns/op of its quiet rounds (of the disturbed ones,
/// where every round was disturbed) as its result, every round, the steal over all of them.
fn median_run(c: &Cell, k: Kept) -> SurveyRun {
    let Kept {
        rounds,
        quiet,
        disturbed,
        refused,
        steal_s,
        layers,
        layers_note,
    } = k;
    let median = |d: bool| {
        let mut v: Vec<f64> = rounds
            .iter()
            .filter(|r| r.disturbed == d)
            .map(|r| r.ns_per_op)
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len().saturating_sub(1) / 2).copied()
    };
    let (mut rs, m) = if quiet.is_empty() {
        (disturbed, median(true))
    } else {
        (quiet, median(false))
    };
    let steal_s = (refused.is_none() && !rs.is_empty()).then_some(steal_s);
    let nearest = (0..rs.len()).min_by(|&a, &b| {
        let d = |i: usize| (rs[i].ns_per_op - m.unwrap_or(f64::NAN)).abs();
        d(a).total_cmp(&d(b))
    });
    let result = nearest.filter(|_| refused.is_none()).map(|i| {
        let mut r = rs.swap_remove(i);
        r.layers = layers.map(|mut l| {
            l.source
                .push_str(" (the survey traces each method's first round only)");
            l
        });
        let said = r.notes.iter().any(|n| n.starts_with(NO_LAYERS));
        if let (None, Some(n), false) = (&r.layers, layers_note, said) {
            r.notes.push(n);
        }
        r
    });
    let (rounds, refused) = if refused.is_some() {
        (Vec::new(), refused)
    } else {
        (rounds, None)
    };
    SurveyRun {
        target: c.target.clone(),
        method: c.method,
        bs: c.bs,
        verdict: result.as_ref().map(crate::verdict::of),
        result,
        unavailable: refused,
        rounds_ns_per_op: rounds.iter().map(|r| r.ns_per_op).collect(),
        rounds_disturbed: rounds.iter().filter(|r| r.disturbed).count() as u32,
        round_runs: rounds,
        steal_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_round_marks_its_row_and_only_output_errors_end_the_survey() {
        let m = why_not(
            Error::Runtime("the offload client did not report ready".into()),
            3,
        );
        assert_eq!(
            m.unwrap(),
            "failed in round 3: the offload client did not report ready"
        );
        let m = why_not(Error::Verify("block 7 differs".into()), 1).unwrap();
        assert_eq!(m, "failed in round 1: verify: block 7 differs");
        // No space is a failure of the run; a kernel without the call is not.
        let sys = |errno| {
            Error::Sys(iolab_engine::error::SysFailure {
                err: iolab_sys::SysErr {
                    call: "pwrite",
                    errno,
                },
                context: None,
                hint: None,
            })
        };
        let m = why_not(sys(libc::ENOSPC), 2).unwrap();
        assert!(
            m.starts_with("failed in round 2: pwrite failed: ENOSPC"),
            "{m}"
        );
        let m = why_not(sys(libc::ENOSYS), 2).unwrap();
        assert!(m.starts_with("pwrite failed: ENOSYS"), "{m}");
        let m = why_not(Error::usage("--method", "not on a pipe"), 1).unwrap();
        assert_eq!(m, "--method: not on a pipe");
        assert!(why_not(Error::Output("stdout: EPIPE".into()), 2).is_err());
    }

    #[test]
    fn every_round_has_its_own_order_and_looks_are_few() {
        let todo: Vec<usize> = (0..20).collect();
        let (a, b) = (shuffled(&todo, 7, 1), shuffled(&todo, 7, 2));
        assert_ne!(a, b);
        let mut s = a.clone();
        s.sort_unstable();
        assert_eq!(s, todo);
        let looks: Vec<u32> = (1..=64).filter(|&r| is_look(r)).collect();
        assert_eq!(looks, [6, 8, 10, 12, 16, 20, 24, 32, 48, 64]);
    }

    #[test]
    fn the_result_is_the_median_round_and_drift_cannot_drop_it() {
        let mut k = Kept::default();
        let clock = iolab_engine::measure::clock::calibrate(1);
        let spec = iolab_engine::spec::RawSpec::new()
            .with("method", "nop")
            .with("ops", 10u64)
            .resolve()
            .unwrap();
        let r = crate::run::run(&spec, &clock).unwrap();
        // A drift: 16 rounds at 100-115, then 14 rounds at 1-14 (the case that defeated trimming both
        // ends); 30 values, their lower median the 15th smallest: 100.
        let values: Vec<f64> = (100..116).chain(1..15).map(f64::from).collect();
        for (i, v) in values.iter().enumerate() {
            let mut x = r.clone();
            x.ns_per_op = *v;
            x.disturbance = None;
            k.push(i as u32 + 1, x);
        }
        assert_eq!(k.quiet.len(), KEEP);
        assert_eq!(k.median(false), 100.0);
        let cell = Cell {
            target: "/dev/null".into(),
            method: iolab_engine::spec::MethodKind::Nop,
            bs: 4,
            spec,
        };
        let run = median_run(&cell, k);
        // The median round of all 30 is still kept, and is the result.
        assert_eq!(run.result.unwrap().ns_per_op, 100.0);
        assert_eq!(run.round_runs.len(), 30);
    }
}
