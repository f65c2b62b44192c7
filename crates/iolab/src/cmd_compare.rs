//! `iolab compare`: prints what `iolab_core::compare` found, and exits 3 on a regression beyond
//! `--fail-on-regression` (and 2 when, with that flag, no workload appears in both files).

use crate::output::{errln, out};
use clap::Args;
use iolab_core::compare::{self, Outcome};
use iolab_core::error::Error;
use iolab_core::series;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct CompareArgs {
    /// The baseline: a `run --json` file, a `run --repeat --json` file or a sweep's record file.
    pub(crate) a: PathBuf,
    /// The candidate, in any of the same forms.
    pub(crate) b: PathBuf,
    /// Exit 3 when a matching workload is slower in B by more than PCT percent and beyond the noise; exit
    /// 2 when no workload appears in both files (nothing compared, nothing ruled out).
    #[arg(long, value_name = "PCT")]
    pub(crate) fail_on_regression: Option<String>,
}

pub(crate) fn cmd_compare(a: &CompareArgs) -> Result<i32, Error> {
    let limit = match &a.fail_on_regression {
        None => None,
        Some(s) => Some(parse_pct(s)?),
    };
    let read =
        |p: &Path| series::read_records(p).map_err(|e| Error::usage("compare", e.to_string()));
    let (ra, _) = read(&a.a)?;
    let (rb, _) = read(&a.b)?;
    let o = compare::compare_records(&ra, &rb, limit);
    out(&render_outcome(a, &o))?;
    if limit.is_some() && o.rows.is_empty() {
        // A gate that compared nothing must not pass: the files were not runs of the same workloads.
        return Err(Error::usage(
            "--fail-on-regression",
            format!(
                "no workload of {} appears in {} (see the 'only in' lines), so nothing was compared and no \
                 regression can be ruled out: compare results of the same workloads",
                a.a.display(),
                a.b.display()
            ),
        ));
    }
    if o.regressions > 0 {
        errln(&format!(
            "iolab: compare: {} figure(s) slower in B by more than {}% and beyond the noise",
            o.regressions,
            o.limit_pct.unwrap_or(0.0)
        ));
        return Ok(3);
    }
    Ok(0)
}

/// `--fail-on-regression PCT` (a trailing % allowed).
fn parse_pct(s: &str) -> Result<f64, Error> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
        _ => Err(Error::usage(
            "--fail-on-regression",
            format!("'{s}' is not a percentage; expected a number such as 5"),
        )),
    }
}

/// What compare found, as the lines it prints.
fn render_outcome(a: &CompareArgs, o: &Outcome) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "iolab compare: A = {}, B = {}; ratio = B / A (medians); noise = the wider measured spread of the two sides, at least {}%",
        a.a.display(),
        a.b.display(),
        compare::MIN_NOISE_PCT
    );
    if let Some(w) = single_run_warning(o) {
        let _ = writeln!(t, "{w}");
    }
    for r in &o.rows {
        let ratio = if r.ratio.is_finite() {
            format!("{:>6.3}", r.ratio)
        } else {
            "     -".to_string()
        };
        let unit = series::FIGURES
            .iter()
            .find(|f| f.name == r.figure)
            .map_or("", |f| f.unit);
        let _ = writeln!(
            t,
            "{:<58} {:<10} A {:>12} (n={})  B {:>12} (n={})  {unit:<24} ratio {ratio}  noise ±{:>4.1}%  {}{}",
            r.workload,
            r.figure,
            value(r.a.median),
            r.a.n,
            value(r.b.median),
            r.b.n,
            r.noise_pct,
            r.verdict.word(),
            if r.a.n < 2 || r.b.n < 2 {
                " (noise not measured)"
            } else {
                ""
            }
        );
    }
    for w in &o.only_a {
        let _ = writeln!(t, "only in A: {w}");
    }
    for w in &o.only_b {
        let _ = writeln!(t, "only in B: {w}");
    }
    if o.rows.is_empty() {
        let _ = writeln!(t, "no workload appears in both files");
    }
    t
}

/// A figure with the decimals its size needs (0.004 s of CPU is not "0.0").
fn value(v: f64) -> String {
    match v.abs() {
        x if x >= 100.0 => format!("{v:.1}"),
        x if x >= 1.0 => format!("{v:.3}"),
        _ => format!("{v:.4}"),
    }
}

/// When either side has a single run of a workload, its spread is unknown: the verdicts then rest on the
/// 2% floor alone, and the output says so once.
fn single_run_warning(o: &Outcome) -> Option<String> {
    let one = |n: fn(&compare::CompareRow) -> usize| o.rows.iter().filter(|r| n(r) < 2).count();
    let (a1, b1) = (one(|r| r.a.n), one(|r| r.b.n));
    (a1 + b1 > 0).then(|| {
        format!(
            "warning: {} of {} rows have a single run in A, {} in B: their noise is not measured, so a \
             difference beyond the {}% floor is called faster or slower on one run each; repeat both sides \
             (`run --repeat 5`, or a sweep with `--vary seed=1,2,3,4,5`) for a verdict that knows the noise",
            a1,
            o.rows.len(),
            b1,
            compare::MIN_NOISE_PCT
        )
    })
}
