//! `iolab compare`: matching workloads of two result files side by side, with ratios, a noise verdict and
//! the `--fail-on-regression` count. Moved out of `series` (which re-exports the names it had).

pub use crate::compare_held::{Figs, Side};
pub use crate::compare_workload::{
    survey_run_as_record, survey_runs_as_records, workload_key, workload_label,
};
use crate::series::FIGURES;
use iolab_engine::stats::{stat, Stat};
use serde::Serialize;
use serde_json::Value;

/// `compare`'s noise band when a side has a single run (no spread measured): differences under this many
/// percent are called "within noise" all the same.
pub const MIN_NOISE_PCT: f64 = 2.0;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub enum Verdict {
    Faster,
    Slower,
    WithinNoise,
    /// A's median is 0 and B's is not (a figure A did not measure): no ratio, no verdict on speed.
    ZeroInA,
    /// B's median is 0 and A's is not.
    ZeroInB,
    /// One side ran on an emulated CPU (QEMU TCG) and the other did not: its times show behaviour, not
    /// speed, and are never ranked against the other's.
    Emulated,
}

#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub workload: String,
    pub figure: String,
    pub a: Stat,
    pub b: Stat,
    /// b's median over a's.
    pub ratio: f64,
    /// The band (percent) a difference must leave to count: the wider of the two sides' measured spreads,
    /// at least MIN_NOISE_PCT.
    pub noise_pct: f64,
    pub verdict: Verdict,
}

/// One workload's runs: its key, its label, and the runs (repeated runs of one workload form one group).
type Group<'a> = (&'a str, &'a str, Vec<&'a Figs>);

/// Groups the runs of a side by workload, in the order each workload first appears (a lookup per run,
/// so that this stays linear in the runs).
fn groups(side: &Side) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    let mut at: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for r in &side.runs {
        match at.get(&r.key) {
            Some(&i) => out[i].2.push(&r.figs),
            None => {
                at.insert(r.key, out.len());
                out.push((side.text(r.key), side.text(r.label), vec![&r.figs]));
            }
        }
    }
    out
}

/// The rows of one workload: each of `figures` (names from FIGURES) that both sides have, with its ratio,
/// noise band and verdict; of runs' results.
pub fn rows_of(label: &str, ra: &[&Value], rb: &[&Value], figures: &[&str]) -> Vec<CompareRow> {
    let figs = |rs: &[&Value]| rs.iter().map(|r| Figs::of(r)).collect::<Vec<_>>();
    let (fa, fb) = (figs(ra), figs(rb));
    let (ra, rb): (Vec<&Figs>, Vec<&Figs>) = (fa.iter().collect(), fb.iter().collect());
    rows_figs(label, &ra, &rb, figures)
}

/// [`rows_of`] of runs' figures.
pub fn rows_figs(label: &str, ra: &[&Figs], rb: &[&Figs], figures: &[&str]) -> Vec<CompareRow> {
    let emulated = |rs: &[&Figs]| rs.iter().any(|r| r.emulated);
    // The most uncertain clock of these runs: two reads and a tick, in ns (0 where none says).
    let clock_ns = ra.iter().chain(rb).map(|r| r.clock_ns).fold(0.0, f64::max);
    let mut rows = Vec::new();
    for (i, f) in FIGURES.iter().enumerate() {
        if !figures.contains(&f.name) {
            continue;
        }
        let xa: Vec<f64> = ra.iter().filter_map(|r| r.figs[i]).collect();
        let xb: Vec<f64> = rb.iter().filter_map(|r| r.figs[i]).collect();
        let (Some(sa), Some(sb)) = (stat(&xa), stat(&xb)) else {
            continue;
        };
        let ratio = if sa.median != 0.0 && sb.median != 0.0 {
            sb.median / sa.median
        } else if sa.median == sb.median {
            1.0
        } else {
            f64::NAN
        };
        let noise_pct = sa.spread_pct.max(sb.spread_pct).max(MIN_NOISE_PCT);
        let change_pct = (ratio - 1.0) * 100.0;
        // A zero against a figure measured is not noise: one side did not measure it.
        let verdict = if emulated(ra) != emulated(rb) {
            Verdict::Emulated
        } else if sa.median == 0.0 && sb.median != 0.0 {
            Verdict::ZeroInA
        } else if sb.median == 0.0 && sa.median != 0.0 {
            Verdict::ZeroInB
        } else if !ratio.is_finite()
            || change_pct.abs() <= noise_pct
            || (f.unit == "ns" && (sb.median - sa.median).abs() <= clock_ns)
        {
            // A latency that differs by less than the clock resolves (two reads and a tick) is
            // within noise whatever its share: 140 against 150 ns on a clock of 20 ns.
            Verdict::WithinNoise
        } else if (change_pct > 0.0) == f.higher_is_better {
            Verdict::Faster
        } else {
            Verdict::Slower
        };
        rows.push(CompareRow {
            workload: label.to_string(),
            figure: f.name.to_string(),
            a: sa,
            b: sb,
            ratio,
            noise_pct,
            verdict,
        });
    }
    rows
}

/// Matching workloads of A and B side by side for `figures` (names from FIGURES); the workloads only one
/// side has are returned apart.
pub fn compare<'a>(
    a: &'a Side,
    b: &'a Side,
    figures: &[&str],
) -> (Vec<CompareRow>, Vec<String>, Vec<String>) {
    let (ga, gb) = (groups(a), groups(b));
    // Each workload's key looked up in the side's own table of texts (not copied).
    type Keys<'k> = std::collections::HashMap<&'k str, usize>;
    let keys =
        |g: &[Group<'a>]| -> Keys<'a> { g.iter().enumerate().map(|(i, x)| (x.0, i)).collect() };
    let (ka, kb) = (keys(&ga), keys(&gb));
    let mut rows = Vec::new();
    for (k, label, ra) in &ga {
        let Some(&j) = kb.get(*k) else {
            continue;
        };
        rows.extend(rows_figs(label, ra, &gb[j].2, figures));
    }
    let only = |x: &[Group<'_>], y: &Keys| {
        x.iter()
            .filter(|g| !y.contains_key(g.0))
            .map(|g| g.1.to_string())
            .collect::<Vec<_>>()
    };
    (rows, only(&ga, &kb), only(&gb, &ka))
}

/// What `compare` reads of a run's result (a record file is cut down to it as it is read): the spec and
/// the kind of target (the workload), and the figures.
pub const KEPT: &[&[&str]] = &[
    &["spec"],
    &["target", "kind"],
    &["target", "fs"],
    &["host", "kernel_release"],
    &["host", "emulated"],
    // Whether its CPU time could have been spent in its span (`series::cpu_withheld`).
    &["host", "cpus_online"],
    &["workload"],
    &["iops"],
    &["mib_s"],
    &["ns_per_op"],
    &["latency", "p50_ns"],
    &["latency", "p99_ns"],
    &["cpu", "process", "user_s"],
    &["cpu", "process", "sys_s"],
    &["syscalls", "method_per_op"],
    // Whether a rate's span was long enough to time it (`series::figure`).
    &["wall_s"],
    &["clock", "overhead_ns"],
    &["clock", "ns_per_tick"],
];

/// The figures `iolab compare` sets side by side.
pub const COMPARED: &[&str] = &["iops", "ns_per_op", "lat_p99", "cpu_sys"];

impl Verdict {
    /// The verdict as `iolab compare` prints it.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::WithinNoise => "within noise",
            Verdict::ZeroInA => "not measured in A (0 there): no ratio",
            Verdict::ZeroInB => "not measured in B (0 there): no ratio",
            Verdict::Emulated => "one side emulated: not ranked",
        }
    }
}

impl CompareRow {
    /// The verdict in the figure's own words: CPU time is "less" or "more", not faster or slower.
    pub fn verdict_word(&self) -> &'static str {
        match (&self.verdict, self.figure.as_str()) {
            (Verdict::Faster, "cpu_sys") => "less",
            (Verdict::Slower, "cpu_sys") => "more",
            (v, _) => v.word(),
        }
    }

    /// How far B's median is from A's, in percent of A's, whichever way.
    pub fn change_pct(&self) -> f64 {
        (self.ratio - 1.0).abs() * 100.0
    }

    /// A regression beyond `limit_pct`: slower in B beyond the noise, and by more than `limit_pct` percent.
    pub fn regresses(&self, limit_pct: f64) -> bool {
        self.verdict == Verdict::Slower && self.change_pct() > limit_pct
    }
}

/// What `iolab compare` found: the rows, the workloads only one side has, and the regressions beyond the
/// `--fail-on-regression` limit.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub rows: Vec<CompareRow>,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// The `--fail-on-regression` limit in percent (none: nothing counts as a regression).
    pub limit_pct: Option<f64>,
    /// How many rows regress beyond the limit (0 without one).
    pub regressions: usize,
}

/// The records of A and B compared on [`COMPARED`], regressions counted against `limit_pct`.
pub fn compare_records(a: &Side, b: &Side, limit_pct: Option<f64>) -> Outcome {
    let (rows, only_a, only_b) = compare(a, b, COMPARED);
    let regressions = match limit_pct {
        Some(l) => rows.iter().filter(|r| r.regresses(l)).count(),
        None => 0,
    };
    Outcome {
        rows,
        only_a,
        only_b,
        limit_pct,
        regressions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(method: &str, iops: f64) -> Value {
        serde_json::json!({
            "spec": {"method": method, "op": "write", "bs": 4096, "pattern": "seq", "threads": 1,
                     "qd": 1, "batch": 1, "seed": 7, "target": "/tmp/x"},
            "target": {"kind": "file"},
            "iops": iops, "ns_per_op": 1e9 / iops,
        })
    }

    fn rec(r: Value) -> Value {
        serde_json::json!({"point": {}, "result": r})
    }

    fn side(r: &[Value]) -> Side {
        Side::of(r.to_vec(), None)
    }

    fn compare(
        a: &[Value],
        b: &[Value],
        f: &[&str],
    ) -> (Vec<CompareRow>, Vec<String>, Vec<String>) {
        super::compare(&side(a), &side(b), f)
    }

    fn compare_records(a: &[Value], b: &[Value], limit: Option<f64>) -> Outcome {
        super::compare_records(&side(a), &side(b), limit)
    }

    #[test]
    fn a_run_timed_with_tracepoints_on_is_another_workload() {
        let plain = result("psync", 100.0);
        let mut inline = plain.clone();
        inline["spec"]["count"] = "inline".into();
        let mut separate = plain.clone();
        separate["spec"]["count"] = "separate".into();
        assert_ne!(workload_key(&plain), workload_key(&inline));
        assert!(
            workload_label(&inline).contains(" count=inline -> "),
            "{}",
            workload_label(&inline)
        );
        assert_eq!(workload_key(&plain), workload_key(&separate));
        // The block layer traced in an untimed pass of its own: the same workload.
        let mut layered = plain.clone();
        layered["spec"]["layers"] = true.into();
        assert_eq!(workload_key(&plain), workload_key(&layered));
    }

    #[test]
    fn identical_runs_are_within_noise() {
        let a: Vec<Value> = [100.0, 104.0, 98.0]
            .iter()
            .map(|&i| rec(result("psync", i)))
            .collect();
        let (rows, only_a, only_b) = compare(&a, &a, &["iops", "ns_per_op"]);
        assert_eq!(rows.len(), 2);
        assert!(only_a.is_empty() && only_b.is_empty());
        for r in rows {
            assert_eq!(r.verdict, Verdict::WithinNoise, "{r:?}");
            assert_eq!(r.ratio, 1.0);
        }
    }

    /// A latency that differs by less than the clock resolves is within noise (one op each: 140 against
    /// 150 ns on a clock of 10 ns a read was "slower", and failed --fail-on-regression).
    #[test]
    fn latencies_within_the_clocks_resolution_are_within_noise() {
        let at = |p99: f64| {
            let mut r = result("nop", 100.0);
            r["latency"] = serde_json::json!({"p99_ns": p99});
            r["clock"] = serde_json::json!({"overhead_ns": 10.0, "ns_per_tick": 0.4});
            vec![rec(r)]
        };
        let (rows, _, _) = compare(&at(140.0), &at(150.0), &["lat_p99"]);
        assert_eq!(rows[0].verdict, Verdict::WithinNoise, "{rows:?}");
        let (rows, _, _) = compare(&at(140.0), &at(300.0), &["lat_p99"]);
        assert_eq!(rows[0].verdict, Verdict::Slower, "{rows:?}");
    }

    #[test]
    fn differences_beyond_the_spread_are_called() {
        let a: Vec<Value> = [100.0, 103.0, 101.0]
            .iter()
            .map(|&i| rec(result("psync", i)))
            .collect();
        let faster: Vec<Value> = [150.0, 152.0, 149.0]
            .iter()
            .map(|&i| rec(result("psync", i)))
            .collect();
        let (rows, _, _) = compare(&a, &faster, &["iops", "ns_per_op"]);
        assert!(
            rows.iter().all(|r| r.verdict == Verdict::Faster),
            "{rows:?}"
        );
        let (rows, _, _) = compare(&faster, &a, &["iops"]);
        assert_eq!(rows[0].verdict, Verdict::Slower);
        // A 5% difference inside a 30% spread is noise.
        let wide: Vec<Value> = [80.0, 105.0, 110.0]
            .iter()
            .map(|&i| rec(result("psync", i)))
            .collect();
        let (rows, _, _) = compare(&a, &wide, &["iops"]);
        assert_eq!(rows[0].verdict, Verdict::WithinNoise, "{rows:?}");
        // Different workloads do not match.
        let other = vec![rec(result("sync", 100.0))];
        let (rows, only_a, only_b) = compare(&a, &other, &["iops"]);
        assert!(rows.is_empty());
        assert_eq!((only_a.len(), only_b.len()), (1, 1));
    }

    #[test]
    fn a_zero_against_a_measured_figure_is_not_noise() {
        let with_p99 = |p99: f64| {
            let mut r = result("psync", 100.0);
            r["latency"] = serde_json::json!({"p99_ns": p99});
            vec![rec(r)]
        };
        let (rows, _, _) = compare(&with_p99(0.0), &with_p99(229_000.0), &["lat_p99"]);
        assert_eq!(rows[0].verdict, Verdict::ZeroInA, "{rows:?}");
        assert!(rows[0].verdict_word().starts_with("not measured in A"));
        let (rows, _, _) = compare(&with_p99(229_000.0), &with_p99(0.0), &["lat_p99"]);
        assert_eq!(rows[0].verdict, Verdict::ZeroInB);
        assert_eq!(
            compare_records(&with_p99(5.0), &with_p99(0.0), Some(0.0)).regressions,
            0
        );
        // Both zero: equal.
        let (rows, _, _) = compare(&with_p99(0.0), &with_p99(0.0), &["lat_p99"]);
        assert_eq!(
            (rows[0].verdict.clone(), rows[0].ratio),
            (Verdict::WithinNoise, 1.0)
        );
    }

    #[test]
    fn what_compare_keeps_of_a_record_holds_every_figure() {
        for f in FIGURES {
            assert!(KEPT.contains(&f.path), "{}", f.name);
        }
        for p in crate::series::FIGURE_SPAN {
            assert!(KEPT.contains(&p), "{p:?}");
        }
    }

    #[test]
    fn regressions_count_only_slower_rows_beyond_the_limit() {
        let a: Vec<Value> = [100.0, 101.0]
            .iter()
            .map(|&i| rec(result("psync", i)))
            .collect();
        let half: Vec<Value> = [50.0, 50.5]
            .iter()
            .map(|&i| rec(result("psync", i)))
            .collect();
        // iops halves and ns_per_op doubles: both slower, by 50% and 100%.
        let o = compare_records(&a, &half, Some(60.0));
        assert_eq!(o.rows.len(), 2);
        assert!(o.rows.iter().all(|r| r.verdict == Verdict::Slower), "{o:?}");
        assert_eq!(o.regressions, 1, "{o:?}");
        assert_eq!(compare_records(&a, &half, Some(10.0)).regressions, 2);
        assert_eq!(compare_records(&a, &half, None).regressions, 0);
        // Faster is never a regression.
        assert_eq!(compare_records(&half, &a, Some(0.0)).regressions, 0);
        assert_eq!(Verdict::WithinNoise.word(), "within noise");
    }
}
